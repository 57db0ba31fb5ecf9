import { parseStatCpuTicks, parseStatus } from './process-stats';

describe('parseStatus', () => {
  it('reads VmRSS and VmHWM in kB', () => {
    const text =
      'Name:\tnode\nVmPeak:\t 1200000 kB\nVmHWM:\t  201234 kB\nVmRSS:\t  150000 kB\nThreads:\t11\n';
    expect(parseStatus(text)).toEqual({ rssKb: 150000, peakRssKb: 201234 });
  });
  it('says which field is missing', () => {
    expect(() => parseStatus('VmRSS:\t1 kB\n')).toThrow(/VmHWM/);
  });
});

describe('parseStatCpuTicks', () => {
  it('adds utime and stime, counting fields after the command name', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[14 - 3] = '1500';
    fields[15 - 3] = '250';
    expect(parseStatCpuTicks(`4242 (node) ${fields.join(' ')}`)).toBe(1750);
    expect(parseStatCpuTicks(`4242 (a (weird) name) ${fields.join(' ')}`)).toBe(1750);
  });
});
