/**
 * A cloud SDK loaded the first time a delivery of its kind needs it, not when the process starts:
 * the AWS clients and the Pub/Sub client together hold about 70 MB of resident memory once loaded,
 * which an installation that delivers only to HTTP endpoints never needs. Each adapter names its
 * SDK with a type-only import and reads its values through this.
 */
export function lazily<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
