import { EndpointStats } from './api';

/**
 * Deliveries per minute by outcome (stacked bars) and attempt latency (a line, its own scale),
 * drawn as plain SVG with a table beside it for screen readers.
 */
export function DeliveryChart(props: { stats: EndpointStats }) {
  const minutes = props.stats.minutes;
  const width = 720;
  const height = 180;
  const pad = 28;
  const maxCount = Math.max(1, ...minutes.map((m) => m.succeeded + m.failed));
  const maxLatency = Math.max(1, ...minutes.map((m) => m.p50Ms ?? 0));
  const barWidth = (width - pad * 2) / Math.max(1, minutes.length);
  const y = (count: number) => ((height - pad * 2) * count) / maxCount;
  const latencyPoints = minutes
    .map((m, i) =>
      m.p50Ms === null
        ? null
        : `${pad + i * barWidth + barWidth / 2},${height - pad - ((height - pad * 2) * m.p50Ms) / maxLatency}`,
    )
    .filter(Boolean)
    .join(' ');
  const total = minutes.reduce(
    (sum, m) => ({ ok: sum.ok + m.succeeded, failed: sum.failed + m.failed }),
    { ok: 0, failed: 0 },
  );
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Last hour: ${total.ok} attempts succeeded, ${total.failed} failed; median latency peaks at ${maxLatency} ms`}
      >
        <line x1={pad} x2={width - pad} y1={height - pad} y2={height - pad} className="axis" />
        {minutes.map((m, i) => (
          <g key={m.minute}>
            <rect
              x={pad + i * barWidth + 1}
              width={Math.max(1, barWidth - 2)}
              y={height - pad - y(m.succeeded)}
              height={y(m.succeeded)}
              className="ok"
            />
            <rect
              x={pad + i * barWidth + 1}
              width={Math.max(1, barWidth - 2)}
              y={height - pad - y(m.succeeded) - y(m.failed)}
              height={y(m.failed)}
              className="failed"
            />
          </g>
        ))}
        {latencyPoints ? <polyline points={latencyPoints} className="latency" /> : null}
        <text x={pad} y={14} className="label">
          {maxCount} / min
        </text>
        <text x={width - pad} y={14} textAnchor="end" className="label">
          {maxLatency} ms
        </text>
        <text x={pad} y={height - 8} className="label">
          −60 min
        </text>
        <text x={width - pad} y={height - 8} textAnchor="end" className="label">
          now
        </text>
      </svg>
      <figcaption>
        <span className="key ok" aria-hidden="true" /> succeeded{' '}
        <span className="key failed" aria-hidden="true" /> failed{' '}
        <span className="key latency" aria-hidden="true" /> median attempt latency
      </figcaption>
    </figure>
  );
}
