import { DataSource } from 'typeorm';
import { createDataSource, EventTypeRepository } from '@hookbase/persistence';
import { createTestDatabase, testEnvironment } from '@hookbase/testing';

// The event type catalogs that ingest and the fan-out keep are read (and read again when stale)
// for many organizations in one statement: each must come back as its own organization's.
describe('event type catalogs read for many organizations at once', () => {
  let database: { url: string; drop: () => Promise<void> };
  let dataSource: DataSource;
  let eventTypes: EventTypeRepository;

  beforeAll(async () => {
    database = await createTestDatabase(testEnvironment().databaseUrl);
    dataSource = createDataSource({ url: database.url, poolSize: 2 });
    await dataSource.initialize();
    eventTypes = new EventTypeRepository(dataSource);
    for (const [id, policy] of [
      ['org_open', 'open'],
      ['org_declared', 'declared'],
      ['org_validated', 'validated'],
      ['org_empty', 'declared'],
    ]) {
      await dataSource.query(
        `INSERT INTO organizations (id, name, plan, event_type_policy, created_at, updated_at)
         VALUES ($1, $1, 'pro', $2, now(), now())`,
        [id, policy],
      );
    }
    const schema = { type: 'object', required: ['id'] };
    for (const organizationId of ['org_open', 'org_declared', 'org_validated']) {
      await eventTypes.create(organizationId, 'order.created', { schema });
      await eventTypes.create(organizationId, 'order.old', { archived: true });
    }
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('gives each organization its policy, its types unless open, and schemas only when validated; none for an unknown one', async () => {
    const found = await eventTypes.snapshots([
      'org_open',
      'org_declared',
      'org_validated',
      'org_empty',
      'org_missing',
      'org_declared',
    ]);
    expect([...found.keys()].sort()).toEqual(
      ['org_declared', 'org_empty', 'org_open', 'org_validated'].sort(),
    );
    expect(found.get('org_open')).toEqual({ policy: 'open', types: [] });
    expect(found.get('org_empty')).toEqual({ policy: 'declared', types: [] });
    const byName = (id: string) =>
      Object.fromEntries(found.get(id)!.types.map((type) => [type.name, type]));
    expect(found.get('org_declared')!.policy).toBe('declared');
    expect(byName('org_declared')).toEqual({
      'order.created': { name: 'order.created', archived: false, version: 1, schema: null },
      'order.old': { name: 'order.old', archived: true, version: 1, schema: null },
    });
    expect(byName('org_validated')['order.created'].schema).toEqual({
      type: 'object',
      required: ['id'],
    });
    expect(await eventTypes.snapshots([])).toEqual(new Map());
  });
});
