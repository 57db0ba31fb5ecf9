import { relayEnvironmentSchema } from './relay-main';

const required = {
  HOOKBASE_OUTBOX_DATABASE_URL: 'postgres://app@127.0.0.1:5432/app',
  HOOKBASE_URL: 'http://127.0.0.1:3000',
  HOOKBASE_API_KEY: 'hb_key',
};

describe('the relay command configuration', () => {
  it('needs the database, the Hookbase URL and an API key, and defaults the rest', () => {
    expect(relayEnvironmentSchema.parse(required)).toEqual({
      ...required,
      HOOKBASE_OUTBOX_BATCH_SIZE: 100,
      HOOKBASE_OUTBOX_IDLE_MS: 1000,
      HOOKBASE_OUTBOX_BACKOFF_MAX_MS: 30_000,
      HOOKBASE_OUTBOX_REQUEST_TIMEOUT_MS: 10_000,
      HOOKBASE_OUTBOX_TEST_HOLD_AFTER_ACCEPT: 'false',
    });
    const missing = relayEnvironmentSchema.safeParse({});
    expect(missing.success).toBe(false);
    expect(missing.error?.issues.map((issue) => issue.path[0]).sort()).toEqual([
      'HOOKBASE_API_KEY',
      'HOOKBASE_OUTBOX_DATABASE_URL',
      'HOOKBASE_URL',
    ]);
  });

  it('refuses values out of range or of the wrong kind', () => {
    for (const bad of [
      { HOOKBASE_OUTBOX_DATABASE_URL: 'mysql://x' },
      { HOOKBASE_URL: 'ftp://x' },
      { HOOKBASE_OUTBOX_BATCH_SIZE: '0' },
      { HOOKBASE_OUTBOX_BATCH_SIZE: '1001' },
      { HOOKBASE_OUTBOX_IDLE_MS: 'soon' },
      { HOOKBASE_OUTBOX_TEST_HOLD_AFTER_ACCEPT: 'yes' },
    ]) {
      expect(relayEnvironmentSchema.safeParse({ ...required, ...bad }).success).toBe(false);
    }
  });
});
