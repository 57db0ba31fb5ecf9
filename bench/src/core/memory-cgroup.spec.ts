import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inMemoryCgroup, makeMemoryCgroup } from './memory-cgroup';

describe('a memory cgroup for the started services (--memory-limit)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'bench-cgroup-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('makes a v1 group in the memory hierarchy, with its limit in bytes', () => {
    mkdirSync(join(root, 'memory'));
    writeFileSync(join(root, 'memory', 'memory.limit_in_bytes'), '9223372036854771712');
    const group = makeMemoryCgroup('hb-x', 512, root);
    expect(readFileSync(join(root, 'memory', 'hb-x', 'memory.limit_in_bytes'), 'utf8')).toBe(
      '536870912',
    );
    expect(group.procs).toBe(join(root, 'memory', 'hb-x', 'cgroup.procs'));
    expect(group.peakBytes()).toBeNull();
    writeFileSync(join(root, 'memory', 'hb-x', 'memory.max_usage_in_bytes'), '300000000\n');
    expect(group.peakBytes()).toBe(300_000_000);
  });

  it('makes a v2 group where the root is cgroup v2, the memory controller enabled for it', () => {
    writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const group = makeMemoryCgroup('hb-y', 1024, root);
    expect(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    expect(readFileSync(join(root, 'hb-y', 'memory.max'), 'utf8')).toBe('1073741824');
    expect(group.procs).toBe(join(root, 'hb-y', 'cgroup.procs'));
    writeFileSync(join(root, 'hb-y', 'memory.peak'), '123\n');
    expect(group.peakBytes()).toBe(123);
  });

  it('says why when it cannot make one', () => {
    expect(() => makeMemoryCgroup('hb-z', 512, root)).toThrow(
      /--memory-limit needs a memory cgroup.*no v1 memory hierarchy/,
    );
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu io pids\n');
    expect(() => makeMemoryCgroup('hb-z', 512, root)).toThrow(/has no memory controller/);
  });

  it('starts the command as the process that joined the group (same pid)', () => {
    const procs = join(root, 'cgroup.procs');
    const { command, args } = inMemoryCgroup(procs, process.execPath, [
      '-e',
      'console.log(process.pid)',
    ]);
    const printed = execFileSync(command, args, { encoding: 'utf8' }).trim();
    expect(readFileSync(procs, 'utf8').trim()).toBe(printed);
  });
});
