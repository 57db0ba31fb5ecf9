import { DomainError } from './errors';

/**
 * The bytes of request bodies a process is serving at once, within a budget. A request is taken
 * while the bodies in flight and its own stay within the budget, or when no other body is in
 * flight (a body larger than the budget still goes alone: the body limit bounds it). A request
 * not taken holds nothing. Pure bookkeeping: the caller gives back what it took when the request
 * has been answered.
 */
export class InFlightBytes {
  private total = 0;

  constructor(readonly budgetBytes: number) {
    if (!Number.isInteger(budgetBytes) || budgetBytes < 1)
      throw new DomainError('INTERNAL', `budget must be a positive whole number of bytes`);
  }

  /** Bytes taken now. */
  get heldBytes(): number {
    return this.total;
  }

  /**
   * Takes `bytes` for a request when they fit, or nothing else is held, or there are none; false
   * otherwise.
   */
  take(bytes: number): boolean {
    if (!Number.isInteger(bytes) || bytes < 0)
      throw new DomainError('INTERNAL', `a request's bytes must be a whole number, got ${bytes}`);
    if (bytes > 0 && this.total > 0 && this.total + bytes > this.budgetBytes) return false;
    this.total += bytes;
    return true;
  }

  /** Gives back the bytes a request took, once it has been answered. */
  give(bytes: number): void {
    if (bytes > this.total)
      throw new DomainError('INTERNAL', `giving back ${bytes} bytes, but ${this.total} are held`);
    this.total -= bytes;
  }
}

/**
 * The body bytes a request is counted for before it is read: its Content-Length, at most the body
 * limit (a longer one is refused whole, unread); the body limit when it declares none but has a
 * body (chunked); 0 when it has none.
 */
export function declaredBodyBytes(
  headers: { 'content-length'?: string; 'transfer-encoding'?: string },
  bodyLimit: number,
): number {
  const declared = headers['content-length'];
  if (declared !== undefined) {
    const bytes = Number(declared);
    return Number.isSafeInteger(bytes) && bytes >= 0 ? Math.min(bytes, bodyLimit) : bodyLimit;
  }
  return headers['transfer-encoding'] !== undefined ? bodyLimit : 0;
}
