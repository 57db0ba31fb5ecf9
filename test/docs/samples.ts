import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DOCS = join(__dirname, '..', '..', 'docs');

/** The fenced code blocks of a docs page, in order, with their language and the heading above. */
export function codeBlocks(page: string): { lang: string; heading: string; code: string }[] {
  const text = readFileSync(join(DOCS, page), 'utf8');
  const blocks: { lang: string; heading: string; code: string }[] = [];
  let heading = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '').trim();
    const open = /^```(\w*)/.exec(line);
    if (!open) continue;
    const code: string[] = [];
    for (i++; i < lines.length && !lines[i].startsWith('```'); i++) code.push(lines[i]);
    blocks.push({ lang: open[1], heading, code: code.join('\n') + '\n' });
  }
  return blocks;
}

/** The one block of `lang` under `heading`; throws when the page has none (so none is skipped). */
export function sample(page: string, heading: string, lang: string): string {
  const found = codeBlocks(page).filter((b) => b.heading === heading && b.lang === lang);
  if (found.length !== 1) {
    throw new Error(
      `${page}: expected one ${lang} block under "${heading}", found ${found.length}`,
    );
  }
  return found[0].code;
}
