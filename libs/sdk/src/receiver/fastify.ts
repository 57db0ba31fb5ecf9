import {
  failureBody,
  verifyWebhook,
  WebhookVerificationFailed,
  type VerifyOptions,
  type WebhookEvent,
} from './verify';

/* The parts of Fastify the plugin uses, typed structurally so the SDK does not depend on Fastify. */
interface FastifyLikeRequest {
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  webhook?: WebhookEvent;
}
interface FastifyLikeReply {
  code(status: number): { send(body: unknown): unknown };
}
interface FastifyLikeInstance {
  hasContentTypeParser(type: string): boolean;
  removeContentTypeParser(type: string | string[]): unknown;
  addContentTypeParser(
    type: string,
    options: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (
      request: unknown,
      body: Buffer,
      done: (error: Error | null, body?: unknown) => void,
    ) => void,
  ): unknown;
  decorateRequest(name: string, value: unknown): unknown;
  hasRequestDecorator(name: string): boolean;
  addHook(
    name: 'preHandler',
    hook: (request: FastifyLikeRequest, reply: FastifyLikeReply) => Promise<unknown>,
  ): unknown;
}

/**
 * Fastify plugin: in the scope it is registered in, JSON bodies are kept as raw bytes, every
 * request is verified before its handler (401 `{ error: { code, message } }` when the signature or
 * timestamp is bad), and `request.webhook` (the event) and `request.body` (the parsed payload) are
 * set. Register it in a scope holding only the webhook routes:
 *
 *   app.register(async (scope) => {
 *     await scope.register(fastifyWebhook, { secret });
 *     scope.post('/webhooks', async (request) => { ... request.webhook ... });
 *   });
 */
export async function fastifyWebhook(
  scope: FastifyLikeInstance,
  options: VerifyOptions & { bodyLimit?: number },
) {
  if (scope.hasContentTypeParser('application/json'))
    scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: options.bodyLimit },
    (_request, body, done) => done(null, body),
  );
  if (!scope.hasRequestDecorator('webhook')) scope.decorateRequest('webhook', undefined);
  scope.addHook('preHandler', async (request, reply) => {
    const raw =
      Buffer.isBuffer(request.body) || typeof request.body === 'string'
        ? request.body
        : Buffer.alloc(0);
    try {
      const event = verifyWebhook(raw, request.headers, options);
      request.webhook = event;
      request.body = event.payload;
    } catch (error) {
      if (!(error instanceof WebhookVerificationFailed)) throw error;
      return reply.code(401).send(failureBody(error));
    }
    return undefined;
  });
}
// Like fastify-plugin: the hooks apply to the scope that registers it, not to a child of it.
(fastifyWebhook as unknown as Record<symbol, unknown>)[Symbol.for('skip-override')] = true;
