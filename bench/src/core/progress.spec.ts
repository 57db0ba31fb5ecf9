import { formatProgress, progressBar } from './progress';

describe('progress line', () => {
  it('draws a bar for the share done', () => {
    expect(progressBar(0.5, 10)).toBe('[#####-----]  50%');
    expect(progressBar(2, 4)).toBe('[####] 100%');
    expect(progressBar(Number.NaN, 4)).toBe('[----]   0%');
  });

  it('shows time, bar, phase and detail, cut to the terminal width', () => {
    const line = formatProgress(
      { phase: 'load', elapsedSeconds: 12.4, fraction: 0.25, detail: 'delivered 10/40' },
      200,
    );
    expect(line).toBe('  12s [#####---------------]  25% load: delivered 10/40');
    const short = formatProgress(
      { phase: 'setup', elapsedSeconds: 1, fraction: null, detail: 'x'.repeat(100) },
      30,
    );
    expect(short.length).toBe(29);
    expect(short.endsWith('…')).toBe(true);
  });
});
