import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTBOX_DROP_SQL, OUTBOX_SCHEMA_SQL } from './schema';

describe('outbox migrations', () => {
  it('ships the same schema as plain SQL and in the TypeORM migration', () => {
    const file = (name: string) => readFileSync(join(__dirname, 'migrations', name), 'utf8');
    expect(file('0001_hookbase_outbox.sql')).toBe(OUTBOX_SCHEMA_SQL);
    expect(file('0001_hookbase_outbox.down.sql')).toBe(OUTBOX_DROP_SQL);
  });
});
