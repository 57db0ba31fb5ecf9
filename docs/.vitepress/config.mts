import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type DefaultTheme } from 'vitepress';

const docs = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A page's title: its first `# ` heading, else its file name. */
function titleOf(folder: string, file: string): string {
  const heading = /^# (.+)$/m.exec(readFileSync(join(docs, folder, file), 'utf8'));
  return heading ? heading[1].trim() : file.replace(/\.md$/, '');
}

/**
 * Every Markdown page of a folder, by file name: pages added there (docs/guides/*.md,
 * docs/adr/*.md) join the sidebar without touching this file.
 */
function folderItems(folder: string): DefaultTheme.SidebarItem[] {
  if (!existsSync(join(docs, folder))) return [];
  return readdirSync(join(docs, folder))
    .filter((file) => file.endsWith('.md') && file !== 'index.md')
    .sort()
    .map((file) => ({
      text: titleOf(folder, file),
      link: `/${folder}/${file.replace(/\.md$/, '')}`,
    }));
}

export default defineConfig({
  title: 'Hookbase',
  description: 'Self-hostable webhook and event delivery with strict per-endpoint FIFO ordering',
  // Served by the api service (and `npm start`) at /docs/, built into dist/docs beside the dashboard.
  base: '/docs/',
  outDir: '../dist/docs',
  cacheDir: '../.cache/vitepress',
  lang: 'en',
  // Dead links fail the build (VitePress's own check); only the API reference, a static page
  // of its own (public/reference/api.html), is outside what VitePress knows.
  ignoreDeadLinks: [/reference\/api(\.html)?$/],
  // Nothing from another host: no web fonts, no search service (local search is built in).
  head: [['link', { rel: 'icon', href: '/docs/favicon.svg', type: 'image/svg+xml' }]],
  srcExclude: ['README.md'],
  themeConfig: {
    logo: '/favicon.svg',
    search: { provider: 'local' },
    outline: [2, 3],
    nav: [
      { text: 'Quickstart', link: '/quickstart' },
      { text: 'Concepts', link: '/concepts' },
      { text: 'API reference', link: '/reference/api.html', target: '_self' },
      { text: 'Configuration', link: '/reference/configuration' },
    ],
    sidebar: [
      {
        text: 'Start',
        items: [
          { text: 'Introduction', link: '/' },
          { text: 'Quickstart', link: '/quickstart' },
          { text: 'Concepts', link: '/concepts' },
        ],
      },
      {
        text: 'Delivery',
        items: [
          { text: 'Delivery guarantees', link: '/delivery-guarantees' },
          { text: 'FIFO ordering', link: '/fifo' },
          { text: 'Destinations', link: '/destinations' },
          { text: 'Receiving webhooks', link: '/receiving' },
          { text: 'Producing events', link: '/producing' },
          { text: 'SDK and command line', link: '/sdk-and-cli' },
          { text: 'API keys and abuse limits', link: '/api-keys' },
        ],
      },
      { text: 'Guides', link: '/guides/', collapsed: false, items: folderItems('guides') },
      {
        text: 'Running Hookbase',
        items: [
          { text: 'Operating', link: '/operating' },
          { text: 'Deploying', link: '/deploying' },
          { text: 'Security', link: '/security' },
          { text: 'Developing Hookbase', link: '/development' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'API reference', link: '/reference/api.html', target: '_self' },
          { text: 'Configuration', link: '/reference/configuration' },
          { text: 'Error codes', link: '/reference/errors' },
        ],
      },
      { text: 'Decisions (ADRs)', collapsed: true, items: folderItems('adr') },
    ],
    footer: { message: 'Apache-2.0 licensed.' },
  },
  vite: {
    // `npm run docs:dev` against a running `npm start`: the API reference reads its /openapi.json.
    server: { proxy: { '/openapi.json': 'http://127.0.0.1:3000' } },
  },
});
