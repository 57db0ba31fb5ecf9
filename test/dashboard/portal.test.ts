import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';
import { checkPage, launchChromium, watchConsole } from './browser';

/**
 * The dashboard's portal mode in Debian's chromium against the real stack: a customer opens the
 * link of application A, sees only A, creates an endpoint with FIFO on and sees a delivery in its
 * log; the token leaves the address bar and never reaches the server's logs; the portal can be
 * embedded from an allowed origin only.
 */
describe('the portal', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  /** Serves a page that frames whatever `?src=` names, at two origins (127.0.0.1 and localhost). */
  let embedder: Server;
  let embedderPort: number;

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    embedder = createServer((request, response) => {
      const src = new URL(request.url ?? '/', 'http://x').searchParams.get('src') ?? '';
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(
        `<!doctype html><html lang="en"><title>Embedder</title><iframe title="portal" width="1000" height="700" src="${src.replace(/"/g, '&quot;')}"></iframe></html>`,
      );
    });
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', resolve));
    embedderPort = (embedder.address() as AddressInfo).port;
    [stack, browser] = await Promise.all([
      startStack({ HOOKBASE_API_KEY_CACHE_MS: '0' }),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await receiver.stop();
    await new Promise((resolve) => embedder?.close(resolve));
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    consoleErrors = watchConsole(page);
  });

  afterEach(async () => {
    await context?.close();
  });

  /** A pro organization with applications A and B, an endpoint of B and one of its own, branded. */
  async function organizationWithPortal() {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    const org = `/api/organizations/${tenant.organizationId}`;
    const admin = new ApiClient(stack.url, stack.adminToken);
    const branded = await admin.patch(org, {
      portal: {
        displayName: 'Acme Webhooks',
        primaryColor: '#7a1fa2',
        allowedOrigins: [`http://127.0.0.1:${embedderPort}`],
      },
    });
    expect(branded.status).toBe(200);
    const appA = (
      await tenant.client.post(`${org}/applications`, { name: 'Globex', uid: 'globex' })
    ).body.data;
    await tenant.client.post(`${org}/applications`, { name: 'Initech', uid: 'initech' });
    for (const body of [
      { url: `${receiverUrl}/b`, applicationId: 'initech' },
      { url: `${receiverUrl}/own` },
    ]) {
      expect((await tenant.client.post(`${org}/webhook-endpoints`, body)).status).toBe(201);
    }
    // The organization's catalog, which its portals read.
    const declared = await tenant.client.post(`${org}/event-types`, {
      name: 'invoice.paid',
      description: 'An invoice was paid',
      schema: { type: 'object', properties: { n: { type: 'integer' } } },
      example: { n: 1 },
    });
    expect(declared.status).toBe(201);
    const access = await tenant.client.post(`${org}/applications/globex/portal-access`, {});
    expect(access.status).toBe(201);
    return {
      ...tenant,
      org,
      appA,
      url: access.body.data.url as string,
      token: access.body.data.token as string,
    };
  }

  it('shows only its application, creates an endpoint with FIFO on and shows its delivery; the token stays out of the address bar and the logs', async () => {
    const portal = await organizationWithPortal();
    await page.goto(portal.url);
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    // The token left the address bar at once, and lives in session storage only.
    expect(page.url()).toBe(`${stack.url}/dashboard/portal/${portal.organizationId}`);
    expect(page.url()).not.toContain(portal.token);
    expect(await page.evaluate(() => sessionStorage.getItem('hookbase.portal-token'))).toBe(
      portal.token,
    );
    await page.locator('.brand', { hasText: 'Acme Webhooks' }).waitFor();
    await page.locator('.org', { hasText: 'Globex' }).waitFor();
    // Nothing of the organization: no other application's endpoints, no sign-out, no admin.
    await page.getByText('No endpoints yet.').waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await checkPage(page, 'portal-empty');

    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
    await dialog.getByLabel('URL').fill(`${receiverUrl}/portal-fifo`);
    const fifo = dialog.getByRole('switch', { name: 'FIFO ordering' });
    await fifo.focus();
    await page.keyboard.press('Space');
    expect(await fifo.getAttribute('aria-checked')).toBe('true');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.getByRole('row', { name: new RegExp(`${receiverUrl}/portal-fifo`) });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/http.*active.*FIFO/);
    const endpoints = (
      await portal.client.get(`${portal.org}/webhook-endpoints?applicationId=globex`)
    ).body.data;
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]).toMatchObject({ applicationId: portal.appA.id, fifoEnabled: true });

    expect(
      (
        await portal.client.post('/v1/events', {
          eventType: 'invoice.paid',
          payload: { n: 1 },
          applicationId: 'globex',
        })
      ).status,
    ).toBe(202);
    await pollUntil(() => receiver.requests.some((r) => r.path === '/portal-fifo'), {
      description: 'the delivery to the portal-made endpoint',
    });
    await page.getByRole('link', { name: 'Message log' }).click();
    await page
      .getByRole('row', { name: /invoice\.paid/ })
      .first()
      .waitFor();
    expect(page.url()).toBe(`${stack.url}/dashboard/portal/${portal.organizationId}/messages`);
    await checkPage(page, 'portal-messages');

    // The catalog, read only: the types and their examples, not the organization's policy.
    await page.getByRole('link', { name: 'Event types' }).click();
    await page.getByRole('button', { name: 'invoice.paid' }).click();
    const detail = page.getByRole('article', { name: 'Event type invoice.paid' });
    expect(JSON.parse((await detail.getByLabel('Example payload').textContent())!)).toEqual({
      n: 1,
    });
    expect(await page.getByLabel('Policy').count()).toBe(0);
    await checkPage(page, 'portal-event-types');

    // The token never reached the server: not in any request line it logged.
    expect(stack.process.logs(2000)).not.toContain(portal.token);
    expect(consoleErrors).toEqual([]);
  });

  it('says so when the link has expired or was revoked', async () => {
    const portal = await organizationWithPortal();
    await portal.client.delete(`${portal.org}/applications/globex/portal-access`);
    await page.goto(portal.url);
    await page
      .getByRole('alert')
      .getByText(/expired or was revoked/)
      .waitFor();
    expect(page.url()).not.toContain(portal.token);
    expect(consoleErrors).toEqual([]);
  });

  it('can be embedded from an allowed origin and is refused from another', async () => {
    const portal = await organizationWithPortal();
    const page1 = await fetch(portal.url.split('#')[0]);
    expect(page1.headers.get('content-security-policy')).toContain(
      `frame-ancestors http://127.0.0.1:${embedderPort};`,
    );
    // Other dashboard pages stay unframeable.
    expect(
      (await fetch(`${stack.url}/dashboard/`)).headers.get('content-security-policy'),
    ).toContain("frame-ancestors 'none'");

    const src = encodeURIComponent(portal.url);
    await page.goto(`http://127.0.0.1:${embedderPort}/?src=${src}`);
    const framed = page.frameLocator('iframe[title="portal"]');
    await framed.getByRole('heading', { name: 'Endpoints' }).waitFor();
    await framed.locator('.brand', { hasText: 'Acme Webhooks' }).waitFor();

    // localhost is another origin: the browser refuses to frame the portal there.
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors/.test(message.text())) refusals.push(message.text());
    });
    await page.goto(`http://localhost:${embedderPort}/?src=${src}`);
    await pollUntil(() => refusals.length > 0, {
      description: 'the browser refusing to frame the portal',
    });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    // What the frame shows is the browser's own error page, nothing of the portal.
    expect(await frame!.locator('.brand').count()).toBe(0);
    expect(await frame!.getByRole('heading', { name: 'Endpoints' }).count()).toBe(0);
    expect(consoleErrors.filter((e) => !/frame-ancestors/.test(e))).toEqual([]);
  });
});
