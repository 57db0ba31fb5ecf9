/** The class of an HTTP status for a metric label: `1xx` … `5xx`, or `none` without a response. */
export function statusClass(status: number | null): '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'none' {
  if (status === null || !Number.isInteger(status) || status < 100 || status > 599) return 'none';
  return `${Math.floor(status / 100) as 1 | 2 | 3 | 4 | 5}xx`;
}
