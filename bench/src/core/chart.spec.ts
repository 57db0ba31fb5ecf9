import { formatTick, niceTicks, renderChart, segments } from './chart';

describe('niceTicks', () => {
  it('covers the range with round steps', () => {
    expect(niceTicks(0, 100, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 9, 4)).toEqual([0, 2.5, 5, 7.5, 10]);
    expect(niceTicks(0, 1234, 4)).toEqual([0, 500, 1000, 1500]);
  });
  it('copes with a flat or empty range', () => {
    expect(niceTicks(0, 0, 4)).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(niceTicks(Number.NaN, 3)).toEqual([0]);
  });
});

describe('formatTick', () => {
  it('shortens large values', () => {
    expect(formatTick(15000)).toBe('15k');
    expect(formatTick(2_500_000)).toBe('2.5M');
    expect(formatTick(0.25)).toBe('0.25');
  });
});

describe('segments', () => {
  it('breaks lines at missing values', () => {
    expect(
      segments([
        [0, 1],
        [1, null],
        [2, 3],
        [3, 4],
      ]),
    ).toEqual([
      [[0, 1]],
      [
        [2, 3],
        [3, 4],
      ],
    ]);
  });
});

describe('renderChart', () => {
  const svg = renderChart({
    title: 'e2e <1000 endpoints>',
    subtitle: 'run & figures',
    xLabel: 'seconds',
    markers: [{ x: 5, label: 'step 2' }],
    panels: [
      {
        title: 'Throughput',
        unit: 'per second',
        series: [
          {
            name: 'delivered',
            color: '#1f77b4',
            points: [
              [0, 10],
              [1, 20],
              [2, null],
              [3, 5],
            ],
          },
        ],
      },
      {
        title: 'Latency',
        unit: 'ms',
        series: [{ name: 'p99', color: '#d62728', points: [[0, 3]] }],
      },
    ],
  });

  it('is a standalone SVG document with escaped text', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('e2e &#60;1000 endpoints&#62;');
    expect(svg).toContain('run &#38; figures');
  });

  it('draws one polyline per unbroken run and a dot for a lone point', () => {
    expect(svg.match(/<polyline/g)).toHaveLength(1);
    expect(svg.match(/<circle/g)).toHaveLength(2);
    expect(svg).not.toContain('NaN');
  });

  it('has the legend, the marker and both panel titles', () => {
    expect(svg).toContain('>delivered<');
    expect(svg).toContain('>p99<');
    expect(svg).toContain('step 2');
    expect(svg).toContain('Throughput');
    expect(svg).toContain('Latency');
  });
});
