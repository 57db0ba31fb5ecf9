import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docsFileFor, DOCS_CSP } from './docs-files';

describe('docsFileFor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookbase-docs-'));
  mkdirSync(join(dir, 'assets'));
  mkdirSync(join(dir, 'reference'));
  for (const file of ['index.html', '404.html', 'quickstart.html', 'reference/index.html']) {
    writeFileSync(join(dir, file), file);
  }
  writeFileSync(join(dir, 'assets', 'app.abc123.js'), '');

  it('answers the home page for the folder itself', () => {
    expect(docsFileFor(dir, '')).toEqual({
      file: join(dir, 'index.html'),
      cacheControl: 'no-cache',
      status: 200,
    });
  });

  it('finds a page with or without its .html, and a folder by its index.html', () => {
    expect(docsFileFor(dir, 'quickstart.html').file).toBe(join(dir, 'quickstart.html'));
    expect(docsFileFor(dir, 'quickstart').file).toBe(join(dir, 'quickstart.html'));
    expect(docsFileFor(dir, 'reference/').file).toBe(join(dir, 'reference', 'index.html'));
  });

  it('caches hashed assets for a year and revalidates pages', () => {
    expect(docsFileFor(dir, 'assets/app.abc123.js').cacheControl).toBe(
      'public, max-age=31536000, immutable',
    );
    expect(docsFileFor(dir, 'quickstart').cacheControl).toBe('no-cache');
  });

  it("answers the site's 404 page for what is not there, or outside the folder", () => {
    const notFound = { file: join(dir, '404.html'), cacheControl: 'no-cache', status: 404 };
    expect(docsFileFor(dir, 'nothing-here')).toEqual(notFound);
    expect(docsFileFor(dir, 'assets/missing.js')).toEqual(notFound);
    expect(docsFileFor(dir, '../package.json')).toEqual(notFound);
    expect(docsFileFor(dir, '%2e%2e/package.json')).toEqual(notFound);
    expect(docsFileFor(dir, 'reference/../../x')).toEqual(notFound);
  });

  it('lets the pages load and call only their own origin', () => {
    expect(DOCS_CSP).toContain("default-src 'self'");
    expect(DOCS_CSP).toContain("connect-src 'self'");
    expect(DOCS_CSP).not.toMatch(/https?:|\*/);
  });
});
