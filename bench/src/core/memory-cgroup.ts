import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a service started inside a memory limit joins it, and how to take the limit away. */
export interface MemoryCgroup {
  /** The file a process writes its pid to, to join the group. */
  procs: string;
  /** The most memory the group's processes held at once (bytes), or null when not told. */
  peakBytes(): number | null;
  /** Removes the group (its processes have exited). */
  remove(): void;
}

/**
 * Makes a memory cgroup of `mib` MiB named `name`, as a container's memory limit: Node.js sizes
 * its heap from it (and, at 512 MiB or less, its young generation too). cgroup v2 when `root` is
 * its mount (the memory controller enabled for children first), else v1's memory hierarchy under
 * `root/memory`. Throws, saying why, when neither can be written (not root, no memory controller).
 */
export function makeMemoryCgroup(name: string, mib: number, root = '/sys/fs/cgroup'): MemoryCgroup {
  const bytes = String(mib * 1024 * 1024);
  const v2Controllers = join(root, 'cgroup.controllers');
  const attempt = (): MemoryCgroup => {
    if (existsSync(v2Controllers)) {
      if (!readFileSync(v2Controllers, 'utf8').split(/\s+/).includes('memory'))
        throw new Error(`cgroup v2 at ${root} has no memory controller`);
      writeFileSync(join(root, 'cgroup.subtree_control'), '+memory');
      const dir = join(root, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), bytes);
      return group(dir, 'memory.peak');
    }
    const v1 = join(root, 'memory');
    if (!existsSync(join(v1, 'memory.limit_in_bytes')))
      throw new Error(`no cgroup v2 at ${root} and no v1 memory hierarchy at ${v1}`);
    const dir = join(v1, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    return group(dir, 'memory.max_usage_in_bytes');
  };
  try {
    return attempt();
  } catch (error) {
    throw new Error(
      `--memory-limit needs a memory cgroup it can make (root, cgroup v1 or v2): ${(error as Error).message}`,
    );
  }
}

function group(dir: string, peakFile: string): MemoryCgroup {
  return {
    procs: join(dir, 'cgroup.procs'),
    peakBytes() {
      try {
        const value = Number(readFileSync(join(dir, peakFile), 'utf8').trim());
        return Number.isFinite(value) ? value : null;
      } catch {
        return null;
      }
    },
    remove() {
      try {
        rmdirSync(dir);
      } catch {
        // Still held by a process that did not exit: left for the machine's owner.
      }
    },
  };
}

/** A command that joins `procs`'s group and then becomes `command args…` (same pid). */
export function inMemoryCgroup(
  procs: string,
  command: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: '/bin/sh',
    args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, command, ...args],
  };
}
