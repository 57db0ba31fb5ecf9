import { Controller, Get, Logger, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigModule, loadConfig } from '@hookbase/config';
import { OpsModule, ShutdownCoordinator } from '@hookbase/runtime';
import { createHttpApp } from './http-app';

let release: () => void = () => undefined;

@Controller()
class SlowController {
  @Get('slow')
  async slow() {
    await new Promise<void>((resolve) => (release = resolve));
    return { data: 'done' };
  }

  @Get('health/live')
  live() {
    return { data: { status: 'live' } };
  }
}

@Module({ controllers: [SlowController] })
class SlowModule {}

/** The HTTP edge of a stopping process (ShutdownCoordinator begun at SIGTERM). */
describe('an HTTP service while it stops', () => {
  let app: NestFastifyApplication;
  let coordinator: ShutdownCoordinator;

  beforeAll(() => Logger.overrideLogger(false));

  beforeEach(async () => {
    const config = loadConfig({});
    app = await createHttpApp(
      {
        module: SlowModule,
        imports: [ConfigModule.forRoot(config), OpsModule.forService({ ownServer: false })],
      },
      config,
    );
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    coordinator = app.get(ShutdownCoordinator);
  });

  afterEach(async () => {
    await app.close();
  });

  it('refuses new requests with 503 SERVICE_UNAVAILABLE, Retry-After and the connection closed', async () => {
    coordinator.begin();
    const answer = await app.inject({ method: 'GET', url: '/slow' });
    expect(answer.statusCode).toBe(503);
    expect(answer.headers).toMatchObject({ 'retry-after': '1', connection: 'close' });
    expect(answer.json()).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringMatching(/shutting down/),
        details: { reason: 'shutting_down' },
      },
    });
  });

  it('still answers health routes, so probes see readiness go false rather than a refusal', async () => {
    coordinator.begin();
    const answer = await app.inject({ method: 'GET', url: '/health/live' });
    expect(answer.statusCode).toBe(200);
  });

  it('answers a request accepted before the stop, closing its connection', async () => {
    const pending = app.inject({ method: 'GET', url: '/slow' });
    await new Promise((resolve) => setImmediate(resolve));
    coordinator.begin();
    release();
    const answer = await pending;
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ data: 'done' });
    expect(answer.headers.connection).toBe('close');
  });

  it('keeps connections alive while it is not stopping', async () => {
    const pending = app.inject({ method: 'GET', url: '/slow' });
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const answer = await pending;
    expect(answer.statusCode).toBe(200);
    expect(answer.headers.connection).not.toBe('close');
  });
});
