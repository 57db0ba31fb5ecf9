import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './errors';

/** Where `listen` left off for one API and organization. */
export interface ListenState {
  endpointId: string;
  /** The cursor after the last message forwarded (absent: from the start). */
  cursor?: string;
  /** Signs forwarded deliveries when the endpoint has no secret of its own (polling endpoints). */
  secret: string;
}

export interface CliConfig {
  apiUrl?: string;
  apiKey?: string;
  organizationId?: string;
  listen?: Record<string, ListenState>;
}

/** `$XDG_CONFIG_HOME/hookbase/config.json` (else `~/.config/hookbase/config.json`). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'hookbase', 'config.json');
}

export function readConfig(path = configPath()): CliConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError('CONFIG_UNREADABLE', `${path}: ${(error as Error).message}`, EXIT.config);
  }
  try {
    return JSON.parse(text) as CliConfig;
  } catch {
    throw new CliError('CONFIG_UNREADABLE', `${path} is not JSON: fix or delete it`, EXIT.config);
  }
}

/** Writes the whole file atomically, readable by the user only (0600, its folder 0700). */
export function writeConfig(config: CliConfig, path = configPath()): void {
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

/** The API to talk to: the environment (HOOKBASE_API_URL, _API_KEY, _ORG) over the stored login. */
export function credentials(
  config: CliConfig,
  env: NodeJS.ProcessEnv = process.env,
): { apiUrl: string; apiKey: string; organizationId: string } {
  const apiUrl = env.HOOKBASE_API_URL || config.apiUrl;
  const apiKey = env.HOOKBASE_API_KEY || config.apiKey;
  const organizationId = env.HOOKBASE_ORG || config.organizationId;
  if (!apiUrl || !apiKey || !organizationId) {
    throw new CliError(
      'NOT_LOGGED_IN',
      'Not logged in: run `hookbase login --api-url URL --api-key KEY --org ORG_ID`',
      EXIT.config,
    );
  }
  return { apiUrl, apiKey, organizationId };
}
