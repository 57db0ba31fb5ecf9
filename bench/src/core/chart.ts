/**
 * A small SVG line chart written by hand (no chart library): stacked panels sharing one time
 * axis, each with its own y axis, grid, legend and polylines. Null points break a line, so a
 * bucket with no deliveries shows as a gap rather than as a fake zero latency.
 */
export interface ChartSeries {
  name: string;
  color: string;
  points: readonly (readonly [number, number | null])[];
}

export interface ChartPanel {
  title: string;
  unit: string;
  series: readonly ChartSeries[];
}

export interface ChartSpec {
  title: string;
  subtitle?: string;
  xLabel: string;
  panels: readonly ChartPanel[];
  /** Vertical lines across every panel (step or run boundaries). */
  markers?: readonly { x: number; label: string }[];
}

const WIDTH = 960;
const PANEL_HEIGHT = 190;
const LEFT = 78;
const RIGHT = 24;
const HEADER = 56;
const PANEL_GAP = 34;
const FOOTER = 44;

/** Round tick values (1, 2, 2.5, 5 × 10^n) covering [min, max], at most about `count` of them. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0];
  if (max <= min) max = min + 1;
  const rough = (max - min) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
  const first = Math.floor(min / step) * step;
  const ticks: number[] = [];
  for (let value = first; value <= max + step * 1e-9; value += step) {
    ticks.push(Number(value.toPrecision(12)));
    if (ticks.length > 50) break;
  }
  if (ticks[ticks.length - 1] < max)
    ticks.push(Number((first + ticks.length * step).toPrecision(12)));
  return ticks;
}

export function formatTick(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e4) return `${Number((value / 1e3).toPrecision(3))}k`;
  return String(Number(value.toPrecision(4)));
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Splits a series at null values into runs of drawable points. */
export function segments(points: ChartSeries['points']): [number, number][][] {
  const runs: [number, number][][] = [];
  let current: [number, number][] = [];
  for (const [x, y] of points) {
    if (y === null || !Number.isFinite(y) || !Number.isFinite(x)) {
      if (current.length > 0) runs.push(current);
      current = [];
    } else current.push([x, y]);
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

export function renderChart(spec: ChartSpec): string {
  const xs = spec.panels.flatMap((panel) => panel.series.flatMap((s) => s.points.map(([x]) => x)));
  const xMin = xs.length > 0 ? Math.min(...xs) : 0;
  const xMaxRaw = xs.length > 0 ? Math.max(...xs) : 1;
  const xTicks = niceTicks(xMin, xMaxRaw > xMin ? xMaxRaw : xMin + 1, 10);
  const xLow = xTicks[0];
  const xHigh = xTicks[xTicks.length - 1];
  const plotWidth = WIDTH - LEFT - RIGHT;
  const sx = (x: number) => LEFT + ((x - xLow) / (xHigh - xLow)) * plotWidth;
  const height = HEADER + spec.panels.length * (PANEL_HEIGHT + PANEL_GAP) + FOOTER;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="22" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`,
  );
  if (spec.subtitle) {
    out.push(`<text x="${LEFT}" y="40" fill="#555">${escapeXml(spec.subtitle)}</text>`);
  }
  spec.panels.forEach((panel, index) => {
    const top = HEADER + index * (PANEL_HEIGHT + PANEL_GAP) + 16;
    const bottom = top + PANEL_HEIGHT - 16;
    const ys = panel.series.flatMap((s) => s.points.flatMap(([, y]) => (y === null ? [] : [y])));
    const yTicks = niceTicks(0, ys.length > 0 ? Math.max(...ys) : 1, 4);
    const yHigh = yTicks[yTicks.length - 1] || 1;
    const sy = (y: number) => bottom - (y / yHigh) * (bottom - top);
    out.push(
      `<text x="${LEFT}" y="${top - 6}" font-weight="bold">${escapeXml(panel.title)}` +
        ` <tspan font-weight="normal" fill="#555">(${escapeXml(panel.unit)})</tspan></text>`,
    );
    for (const tick of yTicks) {
      const y = sy(tick).toFixed(1);
      out.push(
        `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`,
        `<text x="${LEFT - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#333">${formatTick(tick)}</text>`,
      );
    }
    for (const tick of xTicks) {
      const x = sx(tick).toFixed(1);
      out.push(
        `<line x1="${x}" x2="${x}" y1="${top}" y2="${bottom}" stroke="#f0f0f0"/>`,
        `<text x="${x}" y="${bottom + 14}" text-anchor="middle" fill="#333">${formatTick(tick)}</text>`,
      );
    }
    for (const marker of spec.markers ?? []) {
      const x = sx(marker.x).toFixed(1);
      out.push(
        `<line x1="${x}" x2="${x}" y1="${top}" y2="${bottom}" stroke="#999" stroke-dasharray="4 3"/>`,
      );
      if (index === 0) {
        out.push(
          `<text x="${Number(x) + 3}" y="${top + 11}" fill="#666" font-size="10">${escapeXml(marker.label)}</text>`,
        );
      }
    }
    out.push(
      `<line x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${bottom}" stroke="#333"/>`,
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`,
    );
    for (const series of panel.series) {
      for (const run of segments(series.points)) {
        const coords = run.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
        if (run.length === 1) {
          const [cx, cy] = coords.split(',');
          out.push(`<circle cx="${cx}" cy="${cy}" r="2" fill="${series.color}"/>`);
        } else {
          out.push(
            `<polyline fill="none" stroke="${series.color}" stroke-width="1.6" points="${coords}"/>`,
          );
        }
      }
    }
    // The legend sits in the top right corner, as wide as its longest name (about 6.5 px a character).
    const legendWidth = 30 + 6.5 * Math.max(0, ...panel.series.map((s) => s.name.length));
    if (panel.series.length > 0) {
      out.push(
        `<rect x="${WIDTH - RIGHT - legendWidth - 6}" y="${top - 4}" width="${legendWidth + 4}" height="${panel.series.length * 15 + 4}" fill="#ffffff" fill-opacity="0.85"/>`,
      );
    }
    panel.series.forEach((series, i) => {
      const x = WIDTH - RIGHT - legendWidth;
      const y = top + 4 + i * 15;
      out.push(
        `<line x1="${x}" x2="${x + 18}" y1="${y}" y2="${y}" stroke="${series.color}" stroke-width="3"/>`,
        `<text x="${x + 24}" y="${y}" dominant-baseline="middle">${escapeXml(series.name)}</text>`,
      );
    });
  });
  out.push(
    `<text x="${LEFT + plotWidth / 2}" y="${height - 12}" text-anchor="middle" fill="#333">${escapeXml(spec.xLabel)}</text>`,
    '</svg>',
  );
  return out.join('\n') + '\n';
}
