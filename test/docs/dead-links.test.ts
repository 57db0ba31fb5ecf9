import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * `npm run docs:build` (and so `npm run build` and `npm test`) fails on a dead link: a copy of the
 * site with one page linking to nowhere does not build, and the build names the link.
 */
describe('the documentation build', () => {
  const work = mkdtempSync(join(ROOT, '.cache', 'docs-dead-links-'));

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('fails on a link to a page that does not exist', () => {
    const docs = join(work, 'docs');
    cpSync(join(ROOT, 'docs'), docs, {
      recursive: true,
      filter: (source) => !source.includes(`${join('docs', '.vitepress', '.temp')}`),
    });
    writeFileSync(
      join(docs, 'broken.md'),
      '# Broken\n\nSee [the missing page](./no-such-page.md).\n',
    );
    const build = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'vitepress'),
      ['build', docs, '--outDir', join(work, 'out')],
      { cwd: work, encoding: 'utf8', timeout: 240_000 },
    );
    expect(build.status).not.toBe(0);
    expect(`${build.stdout}${build.stderr}`).toMatch(
      /dead link \.\/no-such-page in file broken\.md/,
    );
  });
});
