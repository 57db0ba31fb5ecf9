import type { HookbaseConfig } from '@hookbase/config';
import { EventTypeCatalog } from './event-type-catalog';
import type { CatalogSnapshot, EventTypeRepository } from './repositories/event-type.repository';

/** A repository whose reads finish when the test says, counting them. */
function slowRepository() {
  const reads: { organizationId: string; finish: (snapshot: CatalogSnapshot | Error) => void }[] =
    [];
  const repository = {
    snapshot: (organizationId: string) =>
      new Promise<CatalogSnapshot | null>((resolve, reject) =>
        reads.push({
          organizationId,
          finish: (result) => (result instanceof Error ? reject(result) : resolve(result)),
        }),
      ),
  } as unknown as EventTypeRepository;
  return { repository, reads };
}

const config = { eventTypes: { cacheMs: 60_000 } } as HookbaseConfig;
const declared: CatalogSnapshot = {
  policy: 'declared',
  types: [{ name: 'order.created', archived: false, version: 1, schema: null }],
};
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('EventTypeCatalog', () => {
  it("reads an organization's catalog once for the events that arrive while it is first read", async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, config);
    const admissions = [
      catalog.admit('org_a', 'order.created', {}),
      catalog.admit('org_a', 'order.unknown', {}),
      catalog.admit('org_b', 'order.created', {}),
    ];
    await settle();
    expect(reads.map((read) => read.organizationId)).toEqual(['org_a', 'org_b']);
    reads.forEach((read) => read.finish(declared));
    const [known, unknown, other] = await Promise.all(admissions);
    expect(known.kind).toBe('accepted');
    expect(unknown.kind).toBe('refused');
    expect(other.kind).toBe('accepted');
    // And kept: a later event reads nothing.
    await catalog.admit('org_a', 'order.created', {});
    expect(reads).toHaveLength(2);
  });

  it('reads again for events after a change made during the first read', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, config);
    const before = catalog.admit('org_a', 'order.created', {});
    await settle();
    catalog.forget('org_a');
    const after = catalog.admit('org_a', 'order.created', {});
    await settle();
    expect(reads).toHaveLength(2);
    reads[0].finish(declared);
    reads[1].finish({ policy: 'open', types: [] });
    expect((await before).kind).toBe('accepted');
    expect((await after).kind).toBe('accepted');
  });

  it('does not keep a failed first read: the next event reads again', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, config);
    const failing = catalog.admit('org_a', 'order.created', {});
    await settle();
    reads[0].finish(new Error('store gone'));
    await expect(failing).rejects.toThrow('store gone');
    const next = catalog.admit('org_a', 'order.created', {});
    await settle();
    expect(reads).toHaveLength(2);
    reads[1].finish(declared);
    expect((await next).kind).toBe('accepted');
  });
});
