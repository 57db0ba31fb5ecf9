import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Plain ESM run by node (scripts/test.mjs, scripts/start.mjs), so it is exercised in a node process
// of its own.
const moduleUrl = pathToFileURL(join(__dirname, 'runtime.mjs')).href;
const root = join(__dirname, '..', '..');

function call(name: string, argument: unknown): unknown {
  const program =
    `import { ${name} } from ${JSON.stringify(moduleUrl)};\n` +
    `process.stdout.write(JSON.stringify(${name}(${JSON.stringify(argument)}) ?? null));`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', program]).toString(),
  );
}

describe('the pinned Node.js runtime', () => {
  it('reads the pinned major version from the node devDependency', () => {
    expect(call('pinnedMajor', { devDependencies: { node: '24.21.0' } })).toBe(24);
    expect(call('pinnedMajor', { devDependencies: { node: '^26.1.0' } })).toBe(26);
    expect(call('pinnedMajor', { devDependencies: { jest: '^30.0.0' } })).toBeNull();
  });

  it('accepts any release of the pinned major version', () => {
    expect(
      call('runtimeProblem', { pinned: 24, version: 'v24.99.1', execPath: '/x/node' }),
    ).toBeNull();
    expect(
      call('runtimeProblem', { pinned: undefined, version: 'v20.1.0', execPath: '/x/node' }),
    ).toBeNull();
  });

  it('names the running and the pinned version, and what to do, when they differ', () => {
    const problem = call('runtimeProblem', {
      pinned: 24,
      version: 'v20.20.2',
      execPath: '/usr/bin/node',
    });
    expect(problem).toContain('Node.js 24');
    expect(problem).toContain('v20.20.2 (/usr/bin/node)');
    expect(problem).toContain('npm install');
  });

  it('is the runtime this test runs on, and the one its child processes get', () => {
    const pinned = call(
      'pinnedMajor',
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')),
    );
    expect(pinned).toBe(24);
    expect(process.versions.node.split('.')[0]).toBe(String(pinned));
    const child = execFileSync(process.execPath, ['-p', 'process.versions.node']).toString();
    expect(child.split('.')[0]).toBe(String(pinned));
  });
});
