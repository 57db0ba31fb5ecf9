import { createServer, Server } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { ScratchKafka } from '@hookbase/testing';

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// The broker picks its ports by probing for free ones; another process can take one before the
// JVM binds it. The first start must then come up on fresh ports instead of waiting out its timeout.
describe('a scratch Kafka broker', () => {
  // Holds the port and hangs up on anyone who connects.
  const squatter = createServer((socket) => socket.destroy());
  let kafka: ScratchKafka | undefined;

  afterAll(async () => {
    await kafka?.destroy();
    await new Promise((resolve) => squatter.close(resolve));
  });

  it('starts on fresh ports when the port it picked first is taken by the time it binds', async () => {
    const taken = await listen(squatter);
    const picked: number[] = [];
    // The first port handed out (the broker's listener) is one another process holds.
    kafka = new ScratchKafka(async () => {
      const port = picked.length === 0 ? taken : await freePort();
      picked.push(port);
      return port;
    });

    await kafka.start();

    expect(picked[0]).toBe(taken);
    expect(kafka.brokers).not.toBe(`127.0.0.1:${taken}`);
    expect(kafka.logTail()).toMatch(/Address already in use|BindException/);
    const admin = new Kafka({ brokers: [kafka.brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await expect(admin.listTopics()).resolves.toEqual(expect.any(Array));
    await admin.disconnect();
  });
});
