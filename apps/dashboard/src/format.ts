// How values read on screen. Pure functions: unit tested in format.spec.ts.

export const STATUS_LABELS: Record<string, string> = {
  pending: 'Pending',
  fifo_waiting: 'Queued (FIFO)',
  in_flight: 'In flight',
  awaiting_retry: 'Awaiting retry',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  skipped: 'Skipped',
  expired: 'Expired',
};

export const statusLabel = (status: string): string => STATUS_LABELS[status] ?? status;

export const BLOCKED_REASONS: Record<string, string> = {
  retrying: 'the head message failed and waits for its next attempt',
  circuit_open: 'the circuit breaker is open after repeated failures',
  disabled: 'the endpoint is disabled',
  paused: 'the endpoint is paused',
  lease: 'a dispatcher holds the head (in flight)',
};

export function blockedReasonText(reason: string | null): string {
  if (!reason) return '';
  return BLOCKED_REASONS[reason] ?? reason;
}

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').slice(0, 19);
}

/** `"5000, 30000"` → `[5000, 30000]`, or a message saying what is wrong. */
export function parseDelays(text: string): number[] | string {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  const numbers = parts.map(Number);
  if (numbers.some((n) => !Number.isInteger(n) || n < 0)) {
    return 'Delays are whole numbers of milliseconds, separated by commas';
  }
  return numbers;
}

export const percent = (rate: number | null): string =>
  rate === null ? '—' : `${Math.round(rate * 1000) / 10}%`;

/**
 * Whether the FIFO switch may be turned on, and why not: free plans cannot (turning it off is
 * always allowed), polling endpoints never can (a poller reads in order already).
 */
export function fifoSwitchRule(input: { plan: string; kind: string; fifoEnabled: boolean }): {
  disabled: boolean;
  reason: string | null;
} {
  if (input.fifoEnabled) return { disabled: false, reason: null };
  if (input.kind === 'polling') {
    return {
      disabled: true,
      reason:
        'Polling endpoints cannot use FIFO ordering: the consumer reads messages in order with its cursor, so there is no delivery queue to order.',
    };
  }
  if (input.plan === 'free') {
    return {
      disabled: true,
      reason:
        'FIFO ordering needs the pro or business plan; this organization is on the free plan.',
    };
  }
  return { disabled: false, reason: null };
}

/** The form field an API issue path names: `retry.delaysMs.2` → `retry`. */
export const fieldOf = (path: string): string => path.replace(/^body\./, '').split('.')[0];

/** One header as the API takes it; a sensitive one without value keeps the stored value. */
export interface HeaderInput {
  name: string;
  value?: string;
  sensitive: boolean;
}

/**
 * Headers typed one per line as `Name: value`. A sensitive line with a name alone keeps the stored
 * value. Answers a message naming the first line that is not a header.
 */
export function parseHeaderLines(text: string, sensitive: boolean): HeaderInput[] | string {
  const headers: HeaderInput[] = [];
  const lines = text.split('\n').map((line) => line.trim());
  for (const [index, line] of lines.entries()) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = (colon === -1 ? line : line.slice(0, colon)).trim();
    const value = colon === -1 ? '' : line.slice(colon + 1).trim();
    if (name === '') return `Line ${index + 1}: write Name: value`;
    if (value === '' && !sensitive) return `Line ${index + 1}: ${name} has no value`;
    headers.push(value === '' ? { name, sensitive } : { name, value, sensitive });
  }
  return headers;
}
