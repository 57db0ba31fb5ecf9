// The dashboard's only way to the server: the public HTTP API, with the session's API key.

export interface FieldIssue {
  path: string;
  message: string;
}

/** An error the API answered (its code and message), or a network failure (code NETWORK). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: FieldIssue[] = [],
  ) {
    super(message);
  }
}

export interface Session {
  apiKey: string;
  organizationId: string;
  organizationName: string;
  plan: string;
}

const SESSION_KEY = 'hookbase.session';

/** The session lives in sessionStorage only: gone when the tab closes, never in a URL. */
export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(SESSION_KEY);
    return raw ? (JSON.parse(raw) as Session) : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session) sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(SESSION_KEY);
}

type Listener = (error: ApiError) => void;
let onUnauthorized: Listener = () => undefined;
/** Called when the API refuses the session's key (revoked or expired): back to sign-in. */
export function whenUnauthorized(listener: Listener): void {
  onUnauthorized = listener;
}

export async function request<T>(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ data: T; nextCursor?: string | null }> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The server did not answer. Check that Hookbase is running.');
  }
  if (response.status === 204) return { data: undefined as T };
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } })
      ?.error;
    const details = error?.details as { issues?: FieldIssue[] } | undefined;
    const apiError = new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? `The server answered ${response.status}`,
      Array.isArray(details?.issues) ? details.issues : [],
    );
    throw apiError;
  }
  return parsed as { data: T; nextCursor?: string | null };
}

/** A client bound to the signed-in organization. */
export function clientFor(session: Session) {
  const org = `/api/organizations/${encodeURIComponent(session.organizationId)}`;
  // A signed-in call refused with 401 means the key stopped working: the session ends.
  const call = <T>(method: string, path: string, body?: unknown) =>
    request<T>(method, `${org}${path}`, session.apiKey, body).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 401) onUnauthorized(error);
      throw error;
    });
  return {
    get: <T>(path: string) => call<T>('GET', path).then((r) => r.data),
    page: <T>(path: string) => call<T[]>('GET', path),
    post: <T>(path: string, body?: unknown) => call<T>('POST', path, body).then((r) => r.data),
    patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body).then((r) => r.data),
    del: (path: string) => call<unknown>('DELETE', path).then(() => undefined),
  };
}
export type Client = ReturnType<typeof clientFor>;

export interface Organization {
  id: string;
  name: string;
  plan: string;
}

export interface Endpoint {
  id: string;
  kind: string;
  url: string | null;
  description: string | null;
  config: Record<string, unknown> | null;
  credentials: { configured: boolean } | null;
  eventTypes: string[];
  channels: string[];
  filter: Record<string, unknown> | null;
  status: 'active' | 'paused' | 'disabled';
  fifoEnabled: boolean;
  retry: { delaysMs: number[]; maxAgeMs: number };
  rateLimitPerSecond: number | null;
  headers?: { name: string; value: string; sensitive: boolean }[];
  auth?: { type: string; configured: true } | null;
  timeoutMs?: number | null;
  tlsCa?: string | null;
  disabledReason?: 'manual' | 'failing' | null;
  disabledAt?: string | null;
  health?: {
    failingSince: string | null;
    consecutiveFailures: number;
    lastSuccessAt: string | null;
  };
  createdAt: string;
  updatedAt: string;
}

export interface EventType {
  name: string;
  description: string;
  schema: Record<string, unknown> | boolean | null;
  example: Record<string, unknown> | null;
  deprecated: boolean;
  archived: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface Message {
  id: string;
  eventId: string;
  endpointId: string;
  eventType: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  nextAttemptAt: string | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  replayOf: string | null;
}

export interface Attempt {
  id: string;
  attempt: number;
  startedAt: string;
  durationMs: number | null;
  outcome: string;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
}

export interface FifoState {
  fifoEnabled: boolean;
  state: 'idle' | 'delivering' | 'blocked' | 'paused';
  blocked: boolean;
  blockedReason: string | null;
  queueDepth: number;
  waitingCount: number;
  oldestQueuedAt: string | null;
  lagSeconds: number;
  head: {
    messageId: string;
    eventType: string;
    status: string;
    attempts: number;
    maxAttempts: number;
    nextAttemptAt: string | null;
    lastResponseStatus: number | null;
    lastError: string | null;
  } | null;
  leaseSeconds: number;
}

export interface DlqEntry {
  id: string;
  messageId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  reason: string;
  attempts: number;
  lastError: string | null;
  lastResponseStatus: number | null;
  createdAt: string;
  retriedAt: string | null;
  retryMessageId: string | null;
}

export interface EndpointStats {
  from: string;
  to: string;
  minutes: {
    minute: string;
    succeeded: number;
    failed: number;
    p50Ms: number | null;
    maxMs: number | null;
  }[];
  successRate: number | null;
  lastAttemptAt: string | null;
  recentAttempts: (Attempt & { messageId: string })[];
}
