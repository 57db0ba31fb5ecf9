import { readFile } from 'node:fs/promises';

/** Memory and CPU of a process, from /proc (Linux). */
export interface ProcessSample {
  rssKb: number;
  /** Peak resident set size over the process's life (VmHWM). */
  peakRssKb: number;
  /** User + system CPU time in clock ticks. */
  cpuTicks: number;
}

/** Reads `VmRSS` and `VmHWM` (kB) from the text of /proc/<pid>/status. */
export function parseStatus(text: string): { rssKb: number; peakRssKb: number } {
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    if (!match) throw new Error(`no ${name} in /proc status`);
    return Number(match[1]);
  };
  return { rssKb: field('VmRSS'), peakRssKb: field('VmHWM') };
}

/**
 * utime + stime (fields 14 and 15) from the text of /proc/<pid>/stat. The command name (field 2)
 * is in parentheses and may itself hold spaces or parentheses, so fields are counted from the
 * last closing parenthesis.
 */
export function parseStatCpuTicks(text: string): number {
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error('unreadable /proc stat');
  return utime + stime;
}

/** Linux's USER_HZ; 100 on every common kernel build. */
export const CLOCK_TICKS_PER_SECOND = 100;

export async function sampleProcess(pid: number): Promise<ProcessSample | undefined> {
  try {
    const [status, stat] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    return { ...parseStatus(status), cpuTicks: parseStatCpuTicks(stat) };
  } catch {
    return undefined; // the process is gone (or this is not Linux)
  }
}
