import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, ConsoleMessage, Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..');
/** Where the tests write the dashboard's screenshots (kept by CI with the rest of .data/). */
export const SCREENSHOT_DIR = join(ROOT, '.data', 'screenshots', 'dashboard');
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Debian's chromium (scripts/lib/chromium.mjs installs it), never a downloaded browser. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.HOOKBASE_TEST_CHROMIUM;
  if (!executablePath) {
    throw new Error('Browser tests need chromium: run them with `npm test` (it installs it).');
  }
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
}

/**
 * Console errors and uncaught exceptions a page raised. The browser's own "Failed to load
 * resource: … status of 4xx" lines are not the app's errors: they are the API refusing a request
 * on purpose (a field error, a revoked key), which the page shows to the user.
 */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error') return;
    if (/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()))
      return;
    errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  return errors;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // evaluate() runs outside the page's Content-Security-Policy, which forbids inline scripts.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            context: unknown,
            options: unknown,
          ) => Promise<{
            violations: { id: string; impact: string; nodes: { target: unknown }[] }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact}: ${v.id} at ${v.targets.join(', ')}`);
}

/** A screenshot of the page at 1280 px and at 390 px wide, then back to 1280. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 1280 ? 800 : 844 });
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Every page check: no serious accessibility violation, and screenshots at both widths. */
export async function checkPage(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
  await screenshots(page, name);
}
