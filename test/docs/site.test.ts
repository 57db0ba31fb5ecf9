import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { RunningStack, startStack } from '@hookbase/testing';
import { launchChromium, watchConsole } from '../dashboard/browser';

/** Where the documentation's screenshots go (kept by CI with the rest of .data/). */
const SCREENSHOT_DIR = join(__dirname, '..', '..', '.data', 'screenshots', 'docs');
const PAGES = [
  'index.html',
  'quickstart.html',
  'concepts.html',
  'delivery-guarantees.html',
  'fifo.html',
  'destinations.html',
  'receiving.html',
  'producing.html',
  'operating.html',
  'deploying.html',
  'security.html',
  'reference/configuration.html',
  'reference/errors.html',
];

/**
 * The documentation site as `npm start` and the api service serve it at /docs/, in Debian's
 * chromium: every page and the API reference load with no request to any host but the server's
 * own, and no console error.
 */
describe('the documentation site at /docs/', () => {
  let stack: RunningStack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack(), launchChromium()]);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A page that records every request it makes to another origin. */
  async function newPage(): Promise<{ page: Page; foreign: string[]; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const origin = new URL(stack.url).origin;
    const foreign: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')) {
        foreign.push(url);
      }
    });
    return { page, foreign, errors: watchConsole(page) };
  }

  it('redirects /docs to /docs/, answers a missing page with 404, and keeps /openapi.json', async () => {
    const redirect = await fetch(`${stack.url}/docs`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('/docs/');
    const home = await fetch(`${stack.url}/docs/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await fetch(`${stack.url}/docs/no-such-page`)).status).toBe(404);
    const openapi = await fetch(`${stack.url}/openapi.json`);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { paths: Record<string, unknown> };
    expect(document.paths['/docs']).toBeUndefined();
    expect(document.paths['/openapi.json']).toBeDefined();
  });

  it('shows every page from this server alone', async () => {
    const { page, foreign, errors } = await newPage();
    for (const path of PAGES) {
      const response = await page.goto(`${stack.url}/docs/${path}`, { waitUntil: 'networkidle' });
      expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
      await page.locator('.vp-doc h1').first().waitFor();
    }
    await page.goto(`${stack.url}/docs/`, { waitUntil: 'networkidle' });
    // Every page the sidebar and the top bar name (guides and ADRs included) is there.
    const linked = await page
      .locator('.VPSidebar a[href], .VPNavBar a[href]')
      .evaluateAll((links) => links.map((a) => (a as unknown as { href: string }).href));
    const own = [...new Set(linked.filter((href) => href.startsWith(`${stack.url}/docs/`)))];
    expect(own.length).toBeGreaterThan(PAGES.length);
    for (const href of own) {
      expect({ href, status: (await fetch(href)).status }).toEqual({ href, status: 200 });
    }
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'home-1280.png'), fullPage: true });
    await page.goto(`${stack.url}/docs/quickstart.html`, { waitUntil: 'networkidle' });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'quickstart-1280.png'), fullPage: true });
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('renders the API reference from /openapi.json with the bundled renderer', async () => {
    const { page, foreign, errors } = await newPage();
    const openapi = page.waitForResponse((r) => new URL(r.url()).pathname === '/openapi.json');
    // Reached as a reader does: the home page's link, then the page renders in full.
    await page.goto(`${stack.url}/docs/`, { waitUntil: 'networkidle' });
    await page.locator('.vp-doc').getByRole('link', { name: 'HTTP API' }).click();
    await page.waitForURL(`${stack.url}/docs/reference/api.html`);
    expect((await openapi).status()).toBe(200);
    // Redoc draws each operation's summary; one from the document shows it rendered.
    await page
      .locator('h2')
      .filter({ hasText: 'Publish one event' })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'api-reference-1280.png') });
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
