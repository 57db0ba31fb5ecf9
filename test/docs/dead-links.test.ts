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
      {
        cwd: work,
        encoding: 'utf8',
        timeout: 240_000,
        // The CI environment may force colour; the assertion reads plain text.
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      },
    );
    expect(build.status).not.toBe(0);
    const output = stripAnsi(`${build.stdout}${build.stderr}`);
    expect(output).toMatch(/dead link \.\/no-such-page in file broken\.md/);
  });
});

/** Removes terminal colour sequences, which some environments force on regardless of NO_COLOR. */
function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
