import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configPath, credentials, readConfig, writeConfig } from './config';
import { CliError } from './errors';

describe('CLI configuration', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'hookbase-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lives under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ XDG_CONFIG_HOME: dir })).toBe(join(dir, 'hookbase', 'config.json'));
    expect(configPath({})).toMatch(/\.config\/hookbase\/config\.json$/);
  });

  it('is written readable by the user only and read back', () => {
    const path = configPath({ XDG_CONFIG_HOME: dir });
    writeConfig({ apiUrl: 'http://h', apiKey: 'k', organizationId: 'org_1' }, path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'hookbase')).mode & 0o777).toBe(0o700);
    expect(readConfig(path)).toEqual({ apiUrl: 'http://h', apiKey: 'k', organizationId: 'org_1' });
    expect(readConfig(join(dir, 'missing.json'))).toEqual({});
  });

  it('takes the environment over the stored login, and says how to log in when neither has it', () => {
    expect(
      credentials(
        { apiUrl: 'http://a', apiKey: 'k', organizationId: 'o' },
        { HOOKBASE_API_KEY: 'env' },
      ),
    ).toEqual({ apiUrl: 'http://a', apiKey: 'env', organizationId: 'o' });
    expect(() => credentials({}, {})).toThrow(CliError);
  });
});
