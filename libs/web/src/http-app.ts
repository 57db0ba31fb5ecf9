import { DynamicModule, INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  declaredBodyBytes,
  DomainError,
  jsonShapeProblem,
  jsonTextMayHoldUnstorable,
  unstorableTextAt,
} from '@hookbase/domain';
import { HookbaseConfig } from '@hookbase/config';
import { RequestBodies, ShutdownCoordinator } from '@hookbase/runtime';
import { HttpExceptionFilter } from './http-exception.filter';
import { MAX_PATH_PARAM_LENGTH, toHttpError } from './error-mapping';

/** A Nest application on Fastify, with Hookbase's body limit and error mapping. */
export async function createHttpApp(
  module: DynamicModule,
  config: HookbaseConfig,
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.http.maxPayloadBytes,
    logger: false,
    trustProxy: false,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Errors the router raises before any route runs (an over-long parameter, a path that does
    // not decode) get the same coded body as every other error, not Fastify's own.
    frameworkErrors: (error: Error, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body } = toHttpError(error);
      void reply.code(status).send(body);
    },
    // Requests Node's HTTP parser refuses before Fastify sees them (headers too large, a
    // malformed request line, a request that never finishes) are answered in the same format.
    clientErrorHandler: answerClientError,
  });
  // No logger given: Nest keeps the service's (set by bootstrapService before this runs).
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    bufferLogs: false,
  });
  app.useGlobalFilters(new HttpExceptionFilter());
  addSecurityHeaders(app);
  acceptOnlyJson(app, config.http.maxPayloadBytes);
  refuseUnstorableText(app);
  refuseWhileStopping(app);
  refuseBeyondBodyBudget(app, config);
  return app;
}

/**
 * The request bodies a process serves at once stay within HOOKBASE_HTTP_IN_FLIGHT_BODY_BYTES: each
 * is counted by its declared length from its arrival to its answer (`RequestBodies`, shared with
 * gRPC), and a request beyond the budget is answered 503 SERVICE_UNAVAILABLE with
 * `Retry-After: 1` before its body is read. Nothing of it was accepted, so the client sends it
 * again; requests in flight go on.
 */
function refuseBeyondBodyBudget(app: NestFastifyApplication, config: HookbaseConfig): void {
  const bodies = optionalProvider(app, RequestBodies);
  if (!bodies) return;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', async (request, reply) => {
      const bytes = declaredBodyBytes(request.headers, config.http.maxPayloadBytes);
      if (bytes === 0) return;
      const giveBack = bodies.take(bytes);
      // 'close': the answer is sent, or the connection is gone before it.
      if (giveBack) return void reply.raw.once('close', giveBack);
      return sendAgainLater(
        reply,
        'request_bodies_in_flight',
        'This instance is serving as many request bodies as it may: send it again',
      );
    });
}

/**
 * A provider of the ops module, or undefined in an application built without it (a script
 * rendering the OpenAPI document).
 */
function optionalProvider<T>(app: NestFastifyApplication, token: new (...args: never[]) => T) {
  try {
    return app.get(token, { strict: false }) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Answers 503 SERVICE_UNAVAILABLE with `Retry-After: 1`: the request is to be sent again. */
function sendAgainLater(reply: FastifyReply, reason: string, message: string): FastifyReply {
  void reply
    .code(503)
    .header('retry-after', '1')
    .send({ error: { code: 'SERVICE_UNAVAILABLE', message, details: { reason } } });
  return reply;
}

/**
 * Once the process is stopping (ShutdownCoordinator, at SIGTERM), a new request is answered 503
 * SERVICE_UNAVAILABLE with `Retry-After: 1` and the connection closed, so the client tries another
 * replica; requests already accepted finish. Health routes still answer (readiness says 503).
 * Signals are handled by bootstrapService, which closes the application in order.
 */
function refuseWhileStopping(app: NestFastifyApplication): void {
  const coordinator = optionalProvider(app, ShutdownCoordinator);
  if (!coordinator) return;
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onClose', async () => new Logger('HttpServer').log('closed'));
  // A request accepted before the stop is answered with `Connection: close`: its keep-alive
  // connection would otherwise outlive the server's close (it goes idle only after the close
  // dropped the idle ones) and hold the process until the keep-alive timeout.
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (coordinator.draining) void reply.header('connection', 'close');
    return payload;
  });
  fastify.addHook('onRequest', async (request, reply) => {
    if (!coordinator.draining || request.url.startsWith('/health')) return;
    void reply.header('connection', 'close');
    return sendAgainLater(
      reply,
      'shutting_down',
      'This instance is shutting down: send the request again',
    );
  });
}

/**
 * Headers on every response: `X-Content-Type-Options: nosniff` (a body is never read as anything
 * but its declared type), and `Cache-Control: no-store` unless a route says otherwise. Responses
 * hold tenants' data, and some hold secrets (API keys, signing secrets): none is for a cache.
 */
function addSecurityHeaders(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', async (_request, reply, payload) => {
      void reply.header('x-content-type-options', 'nosniff');
      if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
      return payload;
    });
}

/** The answer, straight onto the socket, to a request the HTTP parser could not read. */
export function clientErrorResponse(errorCode: string | undefined): string {
  const [status, error] =
    errorCode === 'HPE_HEADER_OVERFLOW'
      ? [431, { code: 'HEADERS_TOO_LARGE', message: 'Request headers are larger than the limit' }]
      : errorCode === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, { code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time' }]
        : [400, { code: 'VALIDATION_FAILED', message: 'Malformed HTTP request' }];
  const body = JSON.stringify({ error });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) socket.write(clientErrorResponse(error.code));
  socket.destroy(error);
}

export async function listen(app: INestApplication, config: HookbaseConfig): Promise<string> {
  await app.listen(config.http.port, config.http.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  return `http://${config.http.host}:${port}`;
}

/**
 * JSON is the only body this API takes: other content types get 415 from Fastify. Parse errors
 * are raised as INVALID_JSON domain errors, because Nest turns Fastify's own parser errors into
 * uncoded HTTP exceptions. Keys `__proto__` and `constructor.prototype` are refused (INVALID_JSON),
 * and so are documents nested too deep or with numbers JSON.parse would change (VALIDATION_FAILED,
 * see jsonShapeProblem), before they are parsed.
 */
function acceptOnlyJson(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser('application/json', { bodyLimit }, (request, body, done) => {
    const problem = jsonShapeProblem(body as unknown as string | Buffer);
    if (problem) {
      return done(
        new DomainError('VALIDATION_FAILED', `Invalid request: body: ${problem.message}`, {
          issues: [{ path: 'body', message: problem.message }],
        }),
        undefined,
      );
    }
    // Fastify's parser reads a Buffer as well as a string (it is JSON.parse underneath).
    parseJson(
      request as never,
      body as unknown as string,
      (error: Error | null, value?: unknown) => {
        if (error)
          return done(new DomainError('INVALID_JSON', 'Body is not valid JSON'), undefined);
        if (!jsonTextMayHoldUnstorable(body as unknown as string | Buffer))
          storableBodies.add(request);
        done(null, value);
      },
    );
  });
}

/** Requests whose JSON body had no `\u` escape, so it cannot hold unstorable text. */
const storableBodies = new WeakSet<object>();

/**
 * Every route stores or looks up text in PostgreSQL, which cannot hold U+0000 or unpaired
 * surrogates: such input is answered with a clear 400 here, for bodies, queries and path
 * parameters alike, instead of a database error deep inside.
 */
function refuseUnstorableText(app: NestFastifyApplication): void {
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('preHandler', async (request) => {
      for (const [part, value] of [
        ['body', storableBodies.has(request) ? null : request.body],
        ['query', request.query],
        ['path', request.params],
      ] as const) {
        const at = unstorableTextAt(value);
        if (at !== null) {
          throw new DomainError(
            'VALIDATION_FAILED',
            `Invalid request: ${part} ${at} contains U+0000 or an unpaired surrogate, which cannot be stored`,
            { issues: [{ path: `${part}.${at}`, message: 'unstorable text' }] },
          );
        }
      }
    });
}
