import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationReferencePage, configVariables } from './reference';

const PAGE = join(__dirname, '..', '..', '..', 'docs', 'reference', 'configuration.md');

describe('the configuration reference', () => {
  it('lists every variable of the schema with its default and a description', () => {
    const variables = configVariables();
    expect(variables.length).toBeGreaterThan(40);
    expect(variables.find((v) => v.name === 'PORT')).toEqual({
      name: 'PORT',
      defaultValue: '3000',
      description: expect.stringContaining('HTTP port'),
    });
    expect(variables.find((v) => v.name === 'HOOKBASE_CREDENTIALS_KEY')?.defaultValue).toBeNull();
    for (const variable of variables) expect(variable.description).toBeTruthy();
    const page = configurationReferencePage();
    for (const variable of variables) expect(page).toContain(`| \`${variable.name}\` |`);
  });

  it('is docs/reference/configuration.md as checked in (run `npm run docs:generate` when this fails)', () => {
    expect(readFileSync(PAGE, 'utf8')).toBe(configurationReferencePage());
  });
});
