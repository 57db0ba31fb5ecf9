import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compilerOptions } from '../../tsconfig.base.json';
import { findCycles, ImportGraph, importGraph, runtimeImports } from './import-cycles';

const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe('runtimeImports', () => {
  it('reads imports, re-exports and import-equals, as written', () => {
    const source = [
      "import { a } from './a';",
      "import b from '../b';",
      "import * as c from '@hookbase/c';",
      "import './side-effect';",
      "export * from './d';",
      "export { e } from './e';",
      "import f = require('./f');",
      'export const g = 1;',
    ].join('\n');
    expect(runtimeImports(source)).toEqual([
      './a',
      '../b',
      '@hookbase/c',
      './side-effect',
      './d',
      './e',
      './f',
    ]);
  });

  it('leaves out what imports types only, and keeps a mixed import', () => {
    const source = [
      "import type { A } from './types-a';",
      "import { type B, type C } from './types-b';",
      "export type { D } from './types-d';",
      "import { type E, f } from './mixed';",
    ].join('\n');
    expect(runtimeImports(source)).toEqual(['./mixed']);
  });
});

describe('findCycles', () => {
  it('finds none in a graph without a circle', () => {
    expect(findCycles(graph({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
    expect(findCycles(graph({}))).toEqual([]);
  });

  it('finds a circle of two, and one of three, each from its first file back to it', () => {
    expect(findCycles(graph({ a: ['b'], b: ['a'] }))).toEqual([['a', 'b', 'a']]);
    expect(findCycles(graph({ x: ['y'], y: ['z'], z: ['x'], w: ['x'] }))).toEqual([
      ['x', 'y', 'z', 'x'],
    ]);
  });

  it('finds a file that imports itself', () => {
    expect(findCycles(graph({ a: ['a'], b: ['a'] }))).toEqual([['a', 'a']]);
  });

  it('reports each separate circle once', () => {
    const cycles = findCycles(graph({ a: ['b'], b: ['a', 'c'], c: ['d'], d: ['c'] }));
    expect(cycles).toEqual([
      ['a', 'b', 'a'],
      ['c', 'd', 'c'],
    ]);
  });

  it('walks a long chain of imports without overflowing the stack', () => {
    const edges: Record<string, string[]> = {};
    for (let i = 0; i < 50_000; i++) edges[`m${i}`] = [`m${i + 1}`];
    edges.m50000 = ['m0'];
    const [cycle] = findCycles(graph(edges));
    expect(cycle).toHaveLength(50_002);
    expect(cycle[0]).toBe(cycle[cycle.length - 1]);
  });
});

describe('importGraph', () => {
  let base: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), text);
  };
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('resolves relative files, folders and path aliases, and leaves packages out', () => {
    write('libs/one/src/index.ts', "export * from './thing';");
    write('libs/one/src/thing.ts', "import { two } from '@hookbase/two';\nimport 'kafkajs';");
    write('libs/two/src/index.ts', "export * from './parts';");
    write('libs/two/src/parts/index.ts', "import { one } from '@hookbase/one';");
    const found = importGraph(base, ['libs'], {
      '@hookbase/one': ['libs/one/src/index.ts'],
      '@hookbase/two': ['libs/two/src/index.ts'],
    });
    expect(found.get('libs/one/src/thing.ts')).toEqual(['libs/two/src/index.ts']);
    expect(findCycles(found)).toEqual([
      [
        'libs/one/src/index.ts',
        'libs/one/src/thing.ts',
        'libs/two/src/index.ts',
        'libs/two/src/parts/index.ts',
        'libs/one/src/index.ts',
      ],
    ]);
  });
});

describe('the house', () => {
  it('has no import circle in apps, libs, tests, benchmarks or scripts', () => {
    const root = join(__dirname, '..', '..');
    const found = importGraph(
      root,
      ['apps', 'libs', 'test', 'bench', 'scripts'],
      compilerOptions.paths,
    );
    expect(found.size).toBeGreaterThan(100);
    expect(findCycles(found)).toEqual([]);
  });
});
