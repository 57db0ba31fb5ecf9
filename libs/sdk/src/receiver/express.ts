import type { IncomingMessage, ServerResponse } from 'node:http';
import { readRawBody } from './raw-body';
import {
  failureBody,
  verifyWebhook,
  WebhookVerificationFailed,
  type VerifyOptions,
  type WebhookEvent,
} from './verify';

// `req.webhook` for Express users, typed (merges into Express's Request; harmless without it).
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified delivery, set by `expressWebhook`. */
      webhook?: WebhookEvent;
    }
  }
}

/** The parts of an Express request the middleware uses (no Express types needed). */
export type ExpressLikeRequest = IncomingMessage & { body?: unknown; webhook?: WebhookEvent };
type ExpressLikeResponse = ServerResponse & {
  status(code: number): { json(body: unknown): unknown };
};

export interface ExpressWebhookOptions extends VerifyOptions {
  /** Largest body read (default 1 MiB); a bigger one answers 413. */
  limitBytes?: number;
}

/**
 * Express middleware: verifies the delivery, answers 401 `{ error: { code, message } }` when the
 * signature or timestamp is bad, else sets `req.webhook` (the event) and `req.body` (the parsed
 * payload) and calls `next()`. It needs the raw bytes: mount it on the route before
 * `express.json()`, or after `express.raw({ type: 'application/json' })`.
 */
export function expressWebhook(options: ExpressWebhookOptions) {
  const limit = options.limitBytes ?? 1024 * 1024;
  return async (
    req: ExpressLikeRequest,
    res: ExpressLikeResponse,
    next: (error?: unknown) => void,
  ) => {
    let raw: Buffer | string;
    if (Buffer.isBuffer(req.body) || typeof req.body === 'string') {
      raw = req.body;
    } else if (req.readableEnded) {
      // A JSON parser read the stream first: the exact bytes the signature covers are gone.
      next(
        new Error(
          'Hookbase webhook middleware needs the raw body: mount it before express.json(), or use express.raw({ type: "application/json" })',
        ),
      );
      return;
    } else {
      try {
        raw = await readRawBody(req, limit);
      } catch (error) {
        if (error instanceof RangeError) {
          res.status(413).json({ error: { code: 'PAYLOAD_TOO_LARGE', message: error.message } });
          return;
        }
        next(error);
        return;
      }
    }
    try {
      const event = verifyWebhook(raw, req.headers, options);
      req.webhook = event;
      req.body = event.payload;
    } catch (error) {
      if (error instanceof WebhookVerificationFailed) {
        res.status(401).json(failureBody(error));
        return;
      }
      next(error);
      return;
    }
    next();
  };
}
