export * from './hookbase';
export { HookbaseApiError, HookbaseConnectionError, parseRetryAfter } from './errors';
export { DEFAULT_RETRY_POLICY, isRetryable, retryDelay, type RetryPolicy } from './retry';
export type { components, operations, paths } from './generated/openapi';
