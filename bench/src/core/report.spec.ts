import { fmtMs, fmtRate, renderTable } from './report';

describe('renderTable', () => {
  it('pads columns, right-aligns numbers and underlines the header', () => {
    const text = renderTable(
      ['run', 'throughput/s', 'p99'],
      [
        ['without neighbour', '1,204', '35.0 ms'],
        ['with', '980', '120 ms'],
      ],
    );
    expect(text.split('\n')).toEqual([
      'run                throughput/s      p99',
      '─────────────────  ────────────  ───────',
      'without neighbour         1,204  35.0 ms',
      'with                        980   120 ms',
    ]);
  });
});

describe('formatters', () => {
  it('format latencies and rates readably', () => {
    expect(fmtMs(3.14159)).toBe('3.1 ms');
    expect(fmtMs(250.4)).toBe('250 ms');
    expect(fmtMs(12_345)).toBe('12.3 s');
    expect(fmtMs(1607)).toBe('1.61 s');
    expect(fmtMs(null)).toBe('–');
    expect(fmtRate(12.345)).toBe('12.3');
    expect(fmtRate(1234.5)).toBe('1,235');
  });
});
