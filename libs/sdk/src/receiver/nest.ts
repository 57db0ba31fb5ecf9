import {
  failureBody,
  verifyWebhook,
  WebhookVerificationFailed,
  type VerifyOptions,
  type WebhookEvent,
} from './verify';

/* NestJS is loaded only when these are used, so the SDK does not depend on it. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nest = () => require('@nestjs/common') as typeof import('@nestjs/common');

interface HttpContextLike {
  switchToHttp(): { getRequest<T = unknown>(): T };
}
interface NestRequestLike {
  headers: Record<string, string | string[] | undefined>;
  rawBody?: Buffer;
  body?: unknown;
  webhook?: WebhookEvent;
}

/**
 * NestJS guard (Express or Fastify platform): verifies the delivery and answers 401
 * `{ error: { code, message } }` when the signature or timestamp is bad; the event is then the
 * handler's `@HookbaseWebhook()` parameter and the request's body is the parsed payload. Needs the raw
 * body: create the application with `NestFactory.create(AppModule, adapter, { rawBody: true })`.
 *
 *   @Post('webhooks') @UseGuards(new HookbaseWebhookGuard({ secret: () => process.env.SECRET! }))
 *   receive(@HookbaseWebhook() event: WebhookEvent<Order>) { ... }
 */
export class HookbaseWebhookGuard {
  constructor(private readonly options: VerifyOptions) {}

  canActivate(context: HttpContextLike): boolean {
    const request = context.switchToHttp().getRequest<NestRequestLike>();
    if (!Buffer.isBuffer(request.rawBody)) {
      throw new Error(
        'HookbaseWebhookGuard needs the raw body: create the Nest application with { rawBody: true }',
      );
    }
    try {
      const event = verifyWebhook(request.rawBody, request.headers, this.options);
      request.webhook = event;
      request.body = event.payload;
      return true;
    } catch (error) {
      if (error instanceof WebhookVerificationFailed) {
        throw new (nest().UnauthorizedException)(failureBody(error));
      }
      throw error;
    }
  }
}

/** The verified event, as a handler parameter (after `HookbaseWebhookGuard`). */
export function HookbaseWebhook(): ParameterDecorator {
  const decorator = nest().createParamDecorator(
    (_data: unknown, context: HttpContextLike) =>
      context.switchToHttp().getRequest<NestRequestLike>().webhook,
  );
  return decorator();
}
