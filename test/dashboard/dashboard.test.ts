import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ApiClient,
  createTenant,
  pollUntil,
  RunningStack,
  startStack,
  TestReceiver,
} from '@hookbase/testing';
import { makeTlsFixtures } from '../destinations/tls-fixtures';
import { checkPage, launchChromium, watchConsole } from './browser';

/**
 * The dashboard in Debian's chromium against the real stack (Kafka, PostgreSQL, every service)
 * and a real receiver. Each test asserts what a person sees; every page is checked with axe-core
 * and photographed at 1280 and 390 px; no test may leave a console error behind.
 */
describe('the dashboard', () => {
  let stack: RunningStack;
  const receiver = new TestReceiver();
  let receiverUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  /** Paths whose requests the receiver refuses (503) until a test lets them through. */
  const failing = new Set<string>();

  beforeAll(async () => {
    receiverUrl = await receiver.start();
    receiver.respondWith((request) =>
      failing.has(request.path)
        ? { status: 503, body: 'receiver down' }
        : { status: 200, body: 'ok' },
    );
    // Keys are checked on every request, so a revoked one is refused at once; a circuit opened by
    // a failing receiver closes again after 2 s, so a fixed receiver drains its queue at once.
    [stack, browser] = await Promise.all([
      startStack({ HOOKBASE_API_KEY_CACHE_MS: '0', HOOKBASE_CIRCUIT_COOLDOWN_MS: '2000' }),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await receiver.stop();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    consoleErrors = watchConsole(page);
  });

  afterEach(async () => {
    await context?.close();
    expect(consoleErrors).toEqual([]);
  });

  const dashboard = () => `${stack.url}/dashboard/`;

  /** Signs in with the admin token, creating an organization on `plan`; answers its id. */
  async function signInAsNewOrganization(plan: 'free' | 'pro', name = `Acme ${plan}`) {
    await page.goto(dashboard());
    await page.getByRole('radio', { name: 'Admin token' }).check();
    await page.getByRole('textbox', { name: 'Admin token' }).fill(stack.adminToken);
    await page.getByLabel('Organization name').fill(name);
    await page.getByLabel('Plan', { exact: true }).selectOption(plan);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    const id = await page.locator('.org').getAttribute('title');
    return { organizationId: id!, client: await apiClientFor(id!) };
  }

  /** An API client of its own for the organization, to set up what the page then shows. */
  async function apiClientFor(organizationId: string): Promise<ApiClient> {
    const admin = new ApiClient(stack.url, stack.adminToken);
    const key = await admin.post(`/api/organizations/${organizationId}/api-keys`, { name: 'test' });
    return new ApiClient(stack.url, key.body.data.key);
  }

  async function createEndpoint(client: ApiClient, organizationId: string, body: object) {
    const response = await client.post(
      `/api/organizations/${organizationId}/webhook-endpoints`,
      body,
    );
    expect(response.status).toBe(201);
    return response.body.data.id as string;
  }

  const publish = async (client: ApiClient, eventType: string, payload: object) =>
    expect((await client.post('/v1/events', { eventType, payload })).status).toBe(202);

  it('is served at /dashboard/ with the SPA fallback and cache headers', async () => {
    const index = await fetch(dashboard());
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const script = await fetch(`${stack.url}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const route = await fetch(`${stack.url}/dashboard/endpoints/ep_anything`);
    expect(route.status).toBe(200);
    expect(await route.text()).toBe(html);
    expect((await fetch(`${stack.url}/dashboard/assets/missing.js`)).status).toBe(404);
  });

  it('signs in with an API key, signs out, and sends a revoked key back to sign-in', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'pro');
    await page.goto(dashboard());
    await page.getByRole('heading', { name: 'Sign in to Hookbase' }).waitFor();
    await checkPage(page, 'sign-in');
    await page.getByRole('textbox', { name: 'API key' }).fill(tenant.apiKey);
    await page.getByLabel('Organization ID').fill(tenant.organizationId);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No endpoints yet.').waitFor();
    await checkPage(page, 'endpoints-empty');
    // The key is in session storage only, never in the URL.
    expect(page.url()).not.toContain(tenant.apiKey);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Hookbase' }).waitFor();
    expect(
      await page.evaluate(
        () =>
          (globalThis as unknown as { sessionStorage: { length: number } }).sessionStorage.length,
      ),
    ).toBe(0);

    await page.getByRole('textbox', { name: 'API key' }).fill(tenant.apiKey);
    await page.getByLabel('Organization ID').fill(tenant.organizationId);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No endpoints yet.').waitFor();
    const admin = new ApiClient(stack.url, stack.adminToken);
    const keys = await admin.get(`/api/organizations/${tenant.organizationId}/api-keys`);
    for (const key of keys.body.data) {
      await admin.delete(`/api/organizations/${tenant.organizationId}/api-keys/${key.id}`);
    }
    await page.getByRole('link', { name: 'Message log' }).click();
    await page.getByText(/Your API key was refused \(revoked or expired\)/).waitFor();
    await page.getByRole('heading', { name: 'Sign in to Hookbase' }).waitFor();
  });

  it('signs in with the admin token and opens an existing organization by its id', async () => {
    const tenant = await createTenant(stack.url, stack.adminToken, 'free');
    await page.goto(dashboard());
    await page.getByRole('radio', { name: 'Admin token' }).check();
    await page.getByRole('textbox', { name: 'Admin token' }).fill('not-the-admin-token');
    await page.getByRole('radio', { name: 'Open an existing one by ID' }).check();
    await page.getByLabel('Organization ID').fill(tenant.organizationId);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/That admin token was refused/).waitFor();
    // A refused sign-in is not a revoked session.
    expect(await page.getByText(/Your API key was refused/).count()).toBe(0);
    await page.getByRole('textbox', { name: 'Admin token' }).fill(stack.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('test free (free plan)').waitFor();
    await page.getByText('No endpoints yet.').waitFor();
  });

  it('signs in with the admin token and picks an organization from the list', async () => {
    const admin = new ApiClient(stack.url, stack.adminToken);
    const made = await admin.post('/api/organizations', { name: 'Listed Ltd', plan: 'pro' });
    expect(made.status).toBe(201);
    await page.goto(dashboard());
    await page.getByRole('radio', { name: 'Admin token' }).check();
    await page.getByRole('textbox', { name: 'Admin token' }).fill(stack.adminToken);
    await page.getByRole('radio', { name: 'Pick an existing one from the list' }).check();
    await page.getByRole('button', { name: 'Load organizations' }).click();
    const choice = page.getByRole('combobox', { name: 'Choose an organization' });
    await choice.waitFor();
    // The newest organization comes first, so it is the one chosen until another is picked.
    expect(await choice.inputValue()).toBe(made.body.data.id);
    expect(await choice.locator('option').allTextContents()).toContainEqual(
      `Listed Ltd (pro) · ${made.body.data.id}`,
    );
    await checkPage(page, 'sign-in-pick-organization');
    await choice.selectOption(made.body.data.id);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Listed Ltd (pro plan)').waitFor();
    await page.getByText('No endpoints yet.').waitFor();
  });

  it('creates an HTTP endpoint with FIFO ordering on a pro plan and lists it', async () => {
    await signInAsNewOrganization('pro');
    // Keyboard alone: Tab to "Create endpoint", Enter opens the dialog.
    const create = page.getByRole('button', { name: 'Create endpoint' });
    await create.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
    await dialog.waitFor();
    await dialog.getByLabel('URL').fill(`${receiverUrl}/orders`);
    await dialog.getByLabel('Event types').fill('order.created, order.paid');
    const fifo = dialog.getByRole('switch', { name: 'FIFO ordering' });
    expect(await fifo.getAttribute('aria-checked')).toBe('false');
    await fifo.focus();
    await page.keyboard.press('Space');
    expect(await fifo.getAttribute('aria-checked')).toBe('true');
    await checkPage(page, 'create-endpoint');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.getByRole('row', { name: new RegExp(`${receiverUrl}/orders`) });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/http.*active.*FIFO/);
    await checkPage(page, 'endpoints');
  });

  it('creates an endpoint with headers, write-only auth and a timeout, and edits it without showing secrets', async () => {
    const { client, organizationId } = await signInAsNewOrganization('pro', 'Receivers Inc');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
    await dialog.getByLabel('URL').fill(`${receiverUrl}/with-auth`);
    await dialog.getByLabel('Headers', { exact: true }).fill('X-Tenant: acme');
    await dialog.getByLabel('Sensitive headers').fill('x-api-key: dash-secret-key');
    await dialog.getByLabel('Authentication').selectOption('bearer');
    await dialog.getByLabel('Token').fill('dash-bearer-token');
    await dialog.getByLabel('Timeout (ms)').fill('2000');
    await checkPage(page, 'create-endpoint-receiver');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    const listed = await client.get(`/api/organizations/${organizationId}/webhook-endpoints`);
    const endpoint = listed.body.data[0];
    expect(endpoint).toMatchObject({
      timeoutMs: 2000,
      auth: { type: 'bearer', configured: true },
      headers: [
        { name: 'X-Tenant', value: 'acme', sensitive: false },
        { name: 'x-api-key', value: '********', sensitive: true },
      ],
    });
    const sent = await client.post(
      `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}/test`,
      {},
    );
    expect(sent.body.data.outcome).toBe('succeeded');
    const seen = receiver.requests.find((r) => r.path === '/with-auth')!;
    expect(seen.headers).toMatchObject({
      'x-tenant': 'acme',
      'x-api-key': 'dash-secret-key',
      authorization: 'Bearer dash-bearer-token',
    });

    // Edit: the secrets are not on the page; saving other changes keeps them.
    await page.goto(`${dashboard()}endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit endpoint' });
    await edit.waitFor();
    expect(await edit.getByLabel('Sensitive headers').inputValue()).toBe('x-api-key:');
    expect(await edit.getByLabel('Authentication').inputValue()).toBe('keep');
    expect(await page.content()).not.toContain('dash-secret-key');
    expect(await page.content()).not.toContain('dash-bearer-token');
    await edit.getByLabel('Headers', { exact: true }).fill('X-Tenant: globex');
    await edit.getByLabel('Timeout (ms)').fill('');
    await checkPage(page, 'edit-endpoint-receiver');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });
    const after = await client.get(
      `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}`,
    );
    expect(after.body.data).toMatchObject({
      timeoutMs: null,
      auth: { type: 'bearer', configured: true },
      headers: [
        { name: 'X-Tenant', value: 'globex', sensitive: false },
        { name: 'x-api-key', value: '********', sensitive: true },
      ],
    });
    const before = receiver.requests.length;
    await client.post(
      `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}/test`,
      {},
    );
    const again = receiver.requests.slice(before).find((r) => r.path === '/with-auth')!;
    expect(again.headers).toMatchObject({
      'x-tenant': 'globex',
      'x-api-key': 'dash-secret-key',
      authorization: 'Bearer dash-bearer-token',
    });
  });

  it('creates an mTLS endpoint with its own CA, never showing the private key, and edits the CA', async () => {
    const tls = makeTlsFixtures();
    const peers: string[] = [];
    // A receiver that demands a client certificate signed by the test's CA, with a server
    // certificate from the same CA (trusted only through the endpoint's CA).
    const server: HttpsServer = createHttpsServer(
      {
        cert: tls.serverCert,
        key: tls.serverKey,
        ca: tls.caCert,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (request, response) => {
        peers.push(String((request.socket as TLSSocket).getPeerCertificate().subject?.CN));
        request.resume();
        request.on('end', () => response.end('mtls ok'));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mtls`;
    try {
      const { client, organizationId } = await signInAsNewOrganization('pro', 'Certificates');
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
      await dialog.getByLabel('URL').fill(url);
      await dialog.getByLabel('Authentication').selectOption('mtls');
      await dialog.getByLabel('Client certificate (PEM)').fill(tls.clientCert);
      await dialog.getByLabel('Private key (PEM)').fill(tls.clientKey);
      await dialog.getByLabel('Trusted CA (PEM)').fill(tls.caCert);
      await checkPage(page, 'create-endpoint-mtls');
      await dialog.getByRole('button', { name: 'Create' }).click();
      await dialog.waitFor({ state: 'detached' });
      const listed = await client.get(`/api/organizations/${organizationId}/webhook-endpoints`);
      const endpoint = listed.body.data[0];
      expect(endpoint.auth).toEqual({ type: 'mtls', configured: true });
      expect(endpoint.tlsCa.trim()).toBe(tls.caCert.trim());
      const sent = await client.post(
        `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}/test`,
        {},
      );
      expect(sent.body.data).toMatchObject({ outcome: 'succeeded', responseStatus: 200 });
      expect(peers).toHaveLength(1);

      // Edit: the CA is shown, the key is not; removing the CA makes the receiver untrusted.
      await page.goto(`${dashboard()}endpoints/${endpoint.id}`);
      await page.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit endpoint' });
      await edit.waitFor();
      expect(await edit.getByLabel('Authentication').inputValue()).toBe('keep');
      expect((await edit.getByLabel('Trusted CA (PEM)').inputValue()).trim()).toBe(
        tls.caCert.trim(),
      );
      const keyBody = tls.clientKey.split('\n')[1];
      expect(await page.content()).not.toContain(keyBody);
      await edit.getByLabel('Trusted CA (PEM)').fill('');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      const after = await client.get(
        `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}`,
      );
      expect(after.body.data).toMatchObject({
        tlsCa: null,
        auth: { type: 'mtls', configured: true },
      });
      const refused = await client.post(
        `/api/organizations/${organizationId}/webhook-endpoints/${endpoint.id}/test`,
        {},
      );
      expect(refused.body.data.outcome).not.toBe('succeeded');
      expect(peers).toHaveLength(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('shows an endpoint failing, then disabled for failing with the time, and healthy again once enabled', async () => {
    const { client, organizationId } = await signInAsNewOrganization('pro', 'Health');
    const admin = new ApiClient(stack.url, stack.adminToken);
    expect(
      (await admin.patch(`/api/organizations/${organizationId}`, { autoDisableAfterMs: 1_000 }))
        .status,
    ).toBe(200);
    failing.add('/health');
    const endpointId = await createEndpoint(client, organizationId, {
      url: `${receiverUrl}/health`,
      retry: { delaysMs: [0, ...Array.from({ length: 19 }, () => 300)], maxAgeMs: 600_000 },
    });
    await publish(client, 'health.check', {});
    await page.goto(`${dashboard()}endpoints/${endpointId}`);
    const reason = page.getByTestId('disabled-reason');
    await reason.waitFor({ timeout: 60_000 });
    expect(await reason.textContent()).toContain('Disabled automatically');
    const body = (
      await client.get(`/api/organizations/${organizationId}/webhook-endpoints/${endpointId}`)
    ).body.data;
    expect(body.disabledReason).toBe('failing');
    expect(await reason.textContent()).toContain(
      new Date(body.disabledAt).toISOString().replace('T', ' ').slice(0, 19),
    );
    expect(await page.getByTestId('health-state').textContent()).toBe('failing');
    expect(Number(await page.getByTestId('health-failures').textContent())).toBeGreaterThan(0);
    await checkPage(page, 'endpoint-disabled-failing');
    failing.delete('/health');
    await page
      .getByRole('group', { name: 'Endpoint actions' })
      .getByRole('button', { name: 'Enable', exact: true })
      .click();
    await reason.waitFor({ state: 'detached' });
    // Enabled: the held message goes out, and the streak ends with its success.
    await pollUntil(
      async () => {
        await page.reload();
        return (await page.getByTestId('health-state').textContent()) === 'healthy';
      },
      { description: 'the endpoint shown healthy', timeoutMs: 30_000, intervalMs: 1_000 },
    );
  });

  it('shows the event type catalog (schema rendered, example) and picks types, channels and a filter for an endpoint', async () => {
    const { organizationId, client } = await signInAsNewOrganization('free', 'Catalog Inc');
    const org = `/api/organizations/${organizationId}`;
    const declared = await client.post(`${org}/event-types`, {
      name: 'invoice.paid',
      description: 'An invoice was paid',
      schema: {
        type: 'object',
        required: ['id', 'amount'],
        properties: {
          id: { type: 'string', description: 'The invoice id' },
          amount: { type: 'integer' },
          customer: { type: 'object', properties: { email: { type: 'string' } } },
        },
      },
      example: { id: 'in_1', amount: 990 },
    });
    expect(declared.status).toBe(201);
    expect(
      (await client.post(`${org}/event-types`, { name: 'invoice.voided', deprecated: true }))
        .status,
    ).toBe(201);

    await page.getByRole('link', { name: 'Event types' }).click();
    await page.getByRole('heading', { name: 'Event types' }).waitFor();
    await page.getByRole('button', { name: 'invoice.paid' }).click();
    const detail = page.getByRole('article', { name: 'Event type invoice.paid' });
    await detail.waitFor();
    const fieldRow = detail.getByRole('row', { name: /customer\.email/ });
    expect(await fieldRow.textContent()).toMatch(/customer\.emailstringno/);
    expect(await detail.getByRole('row', { name: /^id/ }).textContent()).toMatch(
      /idstringyesThe invoice id/,
    );
    expect(JSON.parse((await detail.getByLabel('Example payload').textContent())!)).toEqual({
      id: 'in_1',
      amount: 990,
    });
    expect(await page.getByRole('row', { name: /invoice\.voided/ }).textContent()).toMatch(
      /deprecated/,
    );
    await checkPage(page, 'event-types');
    await page.getByLabel('Policy').selectOption('validated');
    await page.getByRole('status').filter({ hasText: 'Policy set to validated.' }).waitFor();
    expect((await client.get(org)).body.data.eventTypePolicy).toBe('validated');

    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
    await dialog.waitFor();
    await dialog.getByLabel('URL').fill(`${receiverUrl}/catalog`);
    await dialog.getByRole('checkbox', { name: 'invoice.paid' }).check();
    expect(await dialog.getByLabel('Event types').inputValue()).toBe('invoice.paid');
    await dialog.getByLabel('Channels').fill('eu, vip');
    await dialog.getByLabel('Filter').fill('{ "payload.amount": { "$gt": "x", "$regex": 1 } }');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.getByText(/Invalid filter at \/payload.amount\/\$regex/).waitFor();
    await dialog.getByLabel('Filter').fill('{ "payload.amount": { "$gte": 100 } }');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    const endpoints = await client.get(`${org}/webhook-endpoints`);
    expect(endpoints.body.data).toEqual([
      expect.objectContaining({
        eventTypes: ['invoice.paid'],
        channels: ['eu', 'vip'],
        filter: { 'payload.amount': { $gte: 100 } },
      }),
    ]);
  });

  it('refuses the FIFO switch on a free plan and says why', async () => {
    await signInAsNewOrganization('free');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });
    const fifo = dialog.getByRole('switch', { name: 'FIFO ordering' });
    expect(await fifo.getAttribute('aria-disabled')).toBe('true');
    await fifo.focus();
    await page.keyboard.press('Space');
    expect(await fifo.getAttribute('aria-checked')).toBe('false');
    await dialog.getByText(/FIFO ordering needs the pro or business plan/).waitFor();
    await dialog.getByRole('link', { name: 'Plan rules' }).waitFor();
    // Polling endpoints can never have it, on any plan, and the dialog says why.
    await dialog.getByLabel('Kind').selectOption('polling');
    await dialog.getByText(/Polling endpoints cannot use FIFO ordering/).waitFor();
    await checkPage(page, 'fifo-refused');
  });

  it('shows an API field error next to its field', async () => {
    await signInAsNewOrganization('pro');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create endpoint' });

    /** The error shown in the named field's own box, and read out with that field. */
    async function errorBeside(label: string): Promise<string> {
      const control = dialog.getByLabel(label, { exact: true });
      await pollUntil(async () => (await control.getAttribute('aria-invalid')) === 'true', {
        description: `the ${label} field marked invalid`,
        timeoutMs: 10_000,
      });
      const field = dialog.locator('.field', { has: page.getByLabel(label, { exact: true }) });
      const message = (await field.locator('.field-error').textContent()) ?? '';
      const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
      const described = await Promise.all(
        describedBy.split(' ').map((id) => page.locator(`[id="${id}"]`).textContent()),
      );
      expect(described).toContain(message);
      return message;
    }

    // VALIDATION_FAILED naming rateLimitPerSecond: the message sits under that field.
    await dialog.getByLabel('URL').fill(`${receiverUrl}/valid`);
    await dialog.getByLabel('Rate limit (per second)').fill('0');
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await errorBeside('Rate limit (per second)')).toMatch(/1/);
    expect(await dialog.getByLabel('URL').getAttribute('aria-invalid')).toBe('false');
    await checkPage(page, 'field-error');

    // A URL the API refuses: the message sits under the URL field.
    await dialog.getByLabel('Rate limit (per second)').fill('');
    await dialog.getByLabel('URL').fill('ftp://example.com/not-http');
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await errorBeside('URL')).toMatch(/http or https/);
  });

  it('shows a blocked FIFO queue growing, the waiting messages in the log, then drains it in order', async () => {
    const { organizationId, client } = await signInAsNewOrganization('pro', 'Blocked Ltd');
    failing.add('/blocked');
    const endpointId = await createEndpoint(client, organizationId, {
      url: `${receiverUrl}/blocked`,
      fifoEnabled: true,
      retry: { delaysMs: [0, ...Array(19).fill(1000)], maxAgeMs: 3_600_000 },
    });
    await publish(client, 'order.created', { n: 1 });
    await page.goto(`${dashboard()}endpoints/${endpointId}`);
    const state = page.getByTestId('queue-state');
    await pollUntil(async () => (await state.textContent()) === 'blocked', {
      description: 'the queue shown blocked',
    });
    await page
      .getByTestId('blocked-reason')
      .getByText(/waits for its next attempt/)
      .waitFor();
    await page.getByText('503 receiver down').first().waitFor();
    for (let n = 2; n <= 4; n += 1) await publish(client, 'order.created', { n });
    // Live refresh: the depth grows on screen without a reload.
    await pollUntil(async () => (await page.getByTestId('queue-depth').textContent()) === '4', {
      description: 'the depth shown as 4',
    });
    await checkPage(page, 'endpoint-blocked');

    await page.getByRole('link', { name: 'Message log' }).click();
    await page.getByLabel('Status').selectOption({ label: 'Queued (FIFO)' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const rows = page.locator('tbody tr');
    await pollUntil(async () => (await rows.count()) === 3, {
      description: 'three queued messages in the filtered log',
    });
    for (const text of await rows.allTextContents()) expect(text).toContain('Queued (FIFO)');
    expect(page.url()).toContain('status=fifo_waiting');
    await checkPage(page, 'messages-queued');

    failing.delete('/blocked');
    await page.goBack();
    await page.goBack();
    await page.getByTestId('queue-depth').waitFor();
    await pollUntil(async () => (await page.getByTestId('queue-depth').textContent()) === '0', {
      description: 'the queue drained to 0',
      timeoutMs: 60_000,
    });
    await page.getByText('The queue is empty.').waitFor();
    const delivered = receiver.requests
      .filter((r) => r.path === '/blocked' && r.headers['hookbase-attempt'] !== undefined)
      .filter((r, i, all) => all.findIndex((o) => o.body === r.body) === i)
      .map((r) => (JSON.parse(r.body) as { n: number }).n);
    expect(delivered).toEqual([1, 2, 3, 4]);
    await checkPage(page, 'endpoint-drained');
  });

  it('filters the message log by creation time on the server', async () => {
    const { organizationId, client } = await signInAsNewOrganization('free', 'Timely Ltd');
    await createEndpoint(client, organizationId, { url: `${receiverUrl}/timely` });
    const messagesPath = `/api/organizations/${organizationId}/messages`;
    const listed = async () =>
      ((await client.get(`${messagesPath}?limit=250`)).body.data ?? []) as {
        eventType: string;
        createdAt: string;
      }[];
    for (let n = 1; n <= 2; n += 1) await publish(client, 'order.early', { n });
    const early = await pollUntil(async () => ((await listed()).length === 2 ? listed() : false), {
      description: 'two early messages in the log',
    });
    // A boundary on a whole second (the form's precision) after every early message ...
    const latest = Math.max(...early.map((m) => Date.parse(m.createdAt)));
    const boundary = new Date(Math.ceil((latest + 1) / 1000) * 1000);
    await pollUntil(() => Date.now() > boundary.getTime() + 1, {
      description: 'the clock passes the boundary',
    });
    // ... and before every late one.
    for (let n = 1; n <= 3; n += 1) await publish(client, 'order.late', { n });
    await pollUntil(async () => (await listed()).length === 5, {
      description: 'five messages in the log',
    });
    const asFormTime = boundary.toISOString().slice(0, 19);

    await page.getByRole('link', { name: 'Message log' }).click();
    const rows = page.locator('tbody tr');
    await pollUntil(async () => (await rows.count()) === 5, { description: 'five rows' });
    await page.getByLabel('Created since (UTC)').fill(asFormTime);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await pollUntil(async () => (await rows.count()) === 3, {
      description: 'three messages created since the boundary',
    });
    for (const text of await rows.allTextContents()) expect(text).toContain('order.late');
    expect(page.url()).toContain('since=');

    await page.getByLabel('Created since (UTC)').fill('');
    await page.getByLabel('Created before (UTC)').fill(asFormTime);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await pollUntil(async () => (await rows.count()) === 2, {
      description: 'two messages created before the boundary',
    });
    for (const text of await rows.allTextContents()) expect(text).toContain('order.early');
    await checkPage(page, 'messages-time-filter');
  });

  it('lists dead-lettered messages with their reason, retries one and then the selected ones', async () => {
    const { organizationId, client } = await signInAsNewOrganization('pro', 'Dead Letters');
    failing.add('/dlq');
    await createEndpoint(client, organizationId, {
      url: `${receiverUrl}/dlq`,
      retry: { delaysMs: [0], maxAgeMs: 3_600_000 },
    });
    for (const invoice of [7, 8, 9]) await publish(client, 'invoice.paid', { invoice });
    await page.getByRole('link', { name: 'DLQ' }).click();
    const rows = page.locator('tbody tr');
    await pollUntil(
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return (await rows.count()) === 3;
      },
      { description: 'three DLQ entries shown', intervalMs: 500 },
    );
    for (const text of await rows.allTextContents()) {
      expect(text).toMatch(/invoice\.paid.*max_attempts.*503/);
    }
    await checkPage(page, 'dlq');
    failing.delete('/dlq');
    // Every request from here on is answered 200: the retried copies.
    const failedBodies = receiver.requests.filter((r) => r.path === '/dlq').length;
    const delivered = () =>
      new Set(
        receiver.requests
          .filter((r) => r.path === '/dlq')
          .slice(failedBodies)
          .map((r) => r.body),
      );

    // Retry one from its row.
    await rows
      .nth(0)
      .getByRole('button', { name: /^Retry/ })
      .click();
    await page.getByText('1 of 1 entry sent again.').waitFor();
    await rows
      .nth(0)
      .getByText(/^Retried/)
      .waitFor();
    // Then the other two, selected with their checkboxes.
    await rows.nth(1).getByRole('checkbox').check();
    await rows.nth(2).getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Retry selected (2)' }).click();
    await page.getByText('2 of 2 entries sent again.').waitFor();
    await pollUntil(
      () => receiver.requests.filter((r) => r.path === '/dlq').length >= failedBodies + 3,
      { description: 'the three retried copies delivered' },
    );
    // One copy of each of the three invoices.
    expect(delivered().size).toBe(3);

    // A message's page: its payload, every attempt, and replay.
    await rows.nth(0).getByRole('link').click();
    await page.getByRole('heading', { name: /^Message msg_/ }).waitFor();
    await page.getByLabel('Event payload').getByText('"invoice":').waitFor();
    await page.getByText('receiver down').first().waitFor();
    await checkPage(page, 'message');
    const beforeReplay = receiver.requests.filter((r) => r.path === '/dlq').length;
    await page.getByRole('button', { name: 'Replay message' }).click();
    await page.getByText(/^Replayed as msg_/).waitFor();
    await pollUntil(
      () => receiver.requests.filter((r) => r.path === '/dlq').length > beforeReplay,
      { description: 'the replayed copy delivered' },
    );
  });

  it('reveals and rotates an endpoint secret, showing the overlap', async () => {
    const { organizationId, client } = await signInAsNewOrganization('pro', 'Secrets Inc');
    const endpointId = await createEndpoint(client, organizationId, {
      url: `${receiverUrl}/secret`,
    });
    const path = `/api/organizations/${organizationId}/webhook-endpoints/${endpointId}/secret`;
    const original: string = (await client.get(path)).body.data.key;
    await page.goto(`${dashboard()}endpoints/${endpointId}`);
    const shown = page.getByTestId('secret-value');
    expect(await shown.textContent()).not.toContain(original);
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    await shown.getByText(original).waitFor();
    await page.getByLabel('Overlap (seconds)').fill('3600');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/keeps signing alongside the new one for 1 h 0 min/).waitFor();
    const rotated: string = (await client.get(path)).body.data.key;
    expect(rotated).not.toBe(original);
    await shown.getByText(rotated).waitFor();
    await checkPage(page, 'endpoint-secret');
  });

  it('pauses, resumes, disables, enables and deletes an endpoint, asking before deleting', async () => {
    const { organizationId, client } = await signInAsNewOrganization('pro', 'Switches');
    const endpointId = await createEndpoint(client, organizationId, {
      url: `${receiverUrl}/switches`,
    });
    await page.goto(`${dashboard()}endpoints/${endpointId}`);
    const actions = page.getByRole('group', { name: 'Endpoint actions' });
    const status = async () =>
      (await client.get(`/api/organizations/${organizationId}/webhook-endpoints/${endpointId}`))
        .body.data?.status;
    for (const [button, expected] of [
      ['Pause', 'paused'],
      ['Resume', 'active'],
      ['Disable', 'disabled'],
      ['Enable', 'active'],
    ] as const) {
      await actions.getByRole('button', { name: button, exact: true }).click();
      await page
        .getByRole('status')
        .getByText(
          `${button === 'Pause' ? 'Paused' : button === 'Resume' ? 'Resumed' : button === 'Disable' ? 'Disabled' : 'Enabled'}.`,
        )
        .waitFor();
      expect(await status()).toBe(expected);
    }
    await actions.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this endpoint?' });
    await confirm.waitFor();
    await checkPage(page, 'endpoint-delete-confirm');
    // Escape keeps it.
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await status()).toBe('active');
    await actions.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No endpoints yet.').waitFor();
    const gone = await client.get(
      `/api/organizations/${organizationId}/webhook-endpoints/${endpointId}`,
    );
    expect(gone.status).toBe(404);
  });
});
