// Finds circles in the imports between the project's TypeScript files: a module that, through
// its imports, ends up importing itself. Such a circle makes what a module sees at load time
// depend on which of its members was loaded first. Imports of types only (`import type`) vanish
// from the compiled code, so they are left out.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

/** A graph of modules: each file's path to the files it imports (run-time imports only). */
export type ImportGraph = Map<string, string[]>;

/** What a file imports at run time, as written (`./x`, `@hookbase/domain`, `node:fs`, ...). */
export function runtimeImports(source: string, fileName = 'module.ts'): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of file.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      // `import { type A, type B } from` imports nothing at run time either.
      if (
        clause &&
        !clause.name &&
        bindings &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly)
      )
        continue;
      if (ts.isStringLiteral(statement.moduleSpecifier)) found.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement)) {
      if (statement.isTypeOnly || !statement.moduleSpecifier) continue;
      if (ts.isStringLiteral(statement.moduleSpecifier)) found.push(statement.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(statement) &&
      !statement.isTypeOnly &&
      ts.isExternalModuleReference(statement.moduleReference) &&
      ts.isStringLiteral(statement.moduleReference.expression)
    ) {
      found.push(statement.moduleReference.expression.text);
    }
  }
  return found;
}

/** Every circle in the graph, each as the files on it, in import order, the first repeated last. */
export function findCycles(graph: ImportGraph): string[][] {
  // Tarjan's strongly connected components; each component of more than one file (or a file that
  // imports itself) holds at least one circle, reported by a walk through it.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (root: string) => {
    // Iterative, so a long chain of imports cannot overflow the call stack.
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);

  const cycles: string[][] = [];
  for (const component of components) {
    const members = new Set(component);
    const start = [...members].sort()[0];
    const selfImport = (graph.get(start) ?? []).includes(start);
    if (members.size === 1 && !selfImport) continue;
    cycles.push(circleThrough(graph, members, start));
  }
  return cycles.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** A shortest circle from `start` back to it, inside one strongly connected component. */
function circleThrough(graph: ImportGraph, members: Set<string>, start: string): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head];
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const back = [node];
        while (back[back.length - 1] !== start) back.push(cameFrom.get(back[back.length - 1])!);
        return [...back.reverse(), start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  throw new Error(`no circle through ${start}`);
}

/**
 * The import graph of the TypeScript files under `roots` (relative to `base`), specs included:
 * `@hookbase/<lib>` is resolved through `paths`, relative imports to a `.ts` file or a folder's
 * `index.ts`; packages and Node's modules are left out.
 */
export function importGraph(
  base: string,
  roots: readonly string[],
  paths: Record<string, readonly string[]>,
): ImportGraph {
  const files = roots.flatMap((root) => typeScriptFiles(join(base, root)));
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const targets = runtimeImports(readFileSync(file, 'utf8'), file)
      .map((specifier) => resolveImport(base, file, specifier, paths))
      .filter((target): target is string => target !== null);
    graph.set(relative(base, file), [...new Set(targets.map((target) => relative(base, target)))]);
  }
  return graph;
}

function resolveImport(
  base: string,
  from: string,
  specifier: string,
  paths: Record<string, readonly string[]>,
): string | null {
  const mapped = paths[specifier]?.[0];
  const path = mapped
    ? resolve(base, mapped)
    : specifier.startsWith('.')
      ? resolve(dirname(from), specifier)
      : null;
  if (path === null) return null;
  for (const candidate of [path, `${path}.ts`, join(path, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate) && statSync(candidate).isFile()) {
      return candidate;
    }
  }
  return null;
}

function typeScriptFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}
