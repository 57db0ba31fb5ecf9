/* eslint-disable @typescript-eslint/no-explicit-any -- request bodies are read loosely, asserted by value */
import { Controller, HttpCode, Module, Post, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  expressWebhook,
  fastifyWebhook,
  HookbaseWebhook,
  HookbaseWebhookGuard,
  type WebhookEvent,
} from '@hookbase/sdk';
import { createTenant, pollUntil, RunningStack, startStack } from '@hookbase/testing';
import express from 'express';
import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

const secret = `whsec_${randomBytes(32).toString('base64')}`;

/** What each framework's handler saw: verified events, and every request's headers and body. */
interface Seen {
  events: WebhookEvent[];
  requests: { headers: Record<string, string>; body: string }[];
}
const seen = (): Seen => ({ events: [], requests: [] });

function headersOf(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string') out[k] = v;
  return out;
}

async function startExpress(record: Seen): Promise<{ url: string; stop: () => Promise<void> }> {
  const app = express();
  app.post(
    '/hooks',
    // Keeps a copy of what arrived (for the tampering tests), without consuming the stream.
    (req, _res, next) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        record.requests.push({
          headers: headersOf(req.headers),
          body: Buffer.concat(chunks).toString(),
        }),
      );
      next();
    },
    expressWebhook({ secret }),
    (req, res) => {
      record.events.push(req.webhook!);
      res.status(204).end();
    },
  );
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function startFastify(record: Seen) {
  const app = Fastify();
  await app.register(async (scope) => {
    await scope.register(fastifyWebhook, { secret });
    scope.post('/hooks', async (request, reply) => {
      record.events.push((request as any).webhook);
      return reply.code(204).send();
    });
  });
  // A route outside the scope still parses JSON as usual.
  app.post('/other', async (request) => ({ echoed: request.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    base: `http://127.0.0.1:${port}`,
    stop: () => app.close(),
  };
}

const nestSeen = seen();
@Controller()
class HooksController {
  @Post('hooks')
  @HttpCode(204)
  @UseGuards(new HookbaseWebhookGuard({ secret }))
  receive(@HookbaseWebhook() event: WebhookEvent) {
    nestSeen.events.push(event);
  }
}
@Module({ controllers: [HooksController] })
class HooksModule {}

async function startNest() {
  const app = await NestFactory.create<NestFastifyApplication>(HooksModule, new FastifyAdapter(), {
    rawBody: true,
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, stop: () => app.close() };
}

/** Posts a body with Standard Webhooks headers signed at `at` (or the given headers). */
function post(url: string, body: string, headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
}

function signedHeaders(body: string, at: Date, id = 'msg_local') {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

describe('receiver helpers with real deliveries', () => {
  let stack: RunningStack;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  const expressSeen = seen();
  const fastifySeen = seen();
  const servers: { name: string; url: string; stop: () => Promise<unknown>; seen: Seen }[] = [];
  let fastifyBase: string;

  beforeAll(async () => {
    stack = await startStack();
    tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const e = await startExpress(expressSeen);
    const f = await startFastify(fastifySeen);
    fastifyBase = f.base;
    const n = await startNest();
    servers.push({ name: 'express', ...e, seen: expressSeen });
    servers.push({ name: 'fastify', ...f, seen: fastifySeen });
    servers.push({ name: 'nest', ...n, seen: nestSeen });
  });

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await stack?.stop();
  });

  it('verifies a real Hookbase delivery in Express, Fastify and NestJS and hands on the event', async () => {
    const org = `/api/organizations/${tenant.organizationId}`;
    const endpointIds: Record<string, string> = {};
    for (const server of servers) {
      const created = await tenant.client.post(`${org}/webhook-endpoints`, {
        url: server.url,
        secret,
        eventTypes: ['order.paid'],
      });
      expect(created.status).toBe(201);
      endpointIds[server.name] = created.body.data.id;
    }
    const published = await tenant.client.post('/v1/events', {
      eventType: 'order.paid',
      payload: { order: 42, note: 'ünïcode ✓' },
    });
    expect(published.status).toBe(202);
    for (const server of servers) {
      const event = await pollUntil(() => server.seen.events[0], {
        description: `${server.name} receives the verified delivery`,
        timeoutMs: 30_000,
      });
      expect(event).toMatchObject({
        eventType: 'order.paid',
        attempt: 1,
        payload: { order: 42, note: 'ünïcode ✓' },
      });
      expect(event.id).toMatch(/^msg_/);
    }
    // Hookbase saw each delivery succeed.
    const messages = await pollUntil(
      async () => {
        const page = await tenant.client.get(`${org}/messages?eventType=order.paid`);
        const data: any[] = page.body.data;
        return data.length === 3 && data.every((m) => m.status === 'succeeded') && data;
      },
      { description: 'three succeeded messages' },
    );
    expect(messages).toHaveLength(3);
  });

  it('answers 401 with a code to a tampered body, an old timestamp, another secret or no signature', async () => {
    // Express recorded the real delivery's headers and body: replay them with a changed body.
    const real = expressSeen.requests[0];
    expect(real).toBeDefined();
    const now = new Date();
    const body = JSON.stringify({ order: 1 });
    for (const server of servers) {
      const tampered = await post(server.url, real.body.replace('42', '43'), real.headers);
      expect([server.name, tampered.status]).toEqual([server.name, 401]);
      expect(await tampered.json()).toMatchObject({ error: { code: 'INVALID_SIGNATURE' } });

      const old = await post(
        server.url,
        body,
        signedHeaders(body, new Date(now.getTime() - 400_000)),
      );
      expect([server.name, old.status]).toEqual([server.name, 401]);
      expect(await old.json()).toMatchObject({ error: { code: 'TIMESTAMP_OUT_OF_TOLERANCE' } });

      const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
      const foreign = await post(server.url, body, {
        ...signedHeaders(body, now),
        'webhook-signature': new Webhook(otherSecret).sign('msg_local', now, body),
      });
      expect([server.name, foreign.status]).toEqual([server.name, 401]);

      const unsigned = await post(server.url, body, {});
      expect([server.name, unsigned.status]).toEqual([server.name, 401]);
      expect(await unsigned.json()).toMatchObject({ error: { code: 'MISSING_HEADERS' } });

      // And a correct local signature passes (the 401s above are about what was wrong).
      const good = await post(server.url, body, signedHeaders(body, now, `msg_ok_${server.name}`));
      expect([server.name, good.status]).toEqual([server.name, 204]);
    }
    for (const server of servers) {
      expect(server.seen.events.map((e) => e.id)).toContain(`msg_ok_${server.name}`);
      expect(server.seen.events).toHaveLength(2);
    }
    // The Fastify plugin changed JSON parsing only in its own scope.
    const other = await fetch(`${fastifyBase}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await other.json()).toEqual({ echoed: { a: 1 } });
  });
});
