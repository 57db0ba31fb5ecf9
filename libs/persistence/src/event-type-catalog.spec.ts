import type { HookbaseConfig } from '@hookbase/config';
import { EventTypeCatalog } from './event-type-catalog';
import type { CatalogSnapshot, EventTypeRepository } from './repositories/event-type.repository';

/**
 * A repository whose reads finish when the test says, counting them: each read is one statement
 * for the organizations it names, finished with one snapshot for all of them (or an error).
 */
function slowRepository() {
  const reads: {
    organizationIds: string[];
    finish: (snapshot: CatalogSnapshot | Error) => void;
  }[] = [];
  const repository = {
    snapshots: (organizationIds: readonly string[]) =>
      new Promise<Map<string, CatalogSnapshot>>((resolve, reject) =>
        reads.push({
          organizationIds: [...organizationIds],
          finish: (result) =>
            result instanceof Error
              ? reject(result)
              : resolve(new Map(organizationIds.map((id) => [id, result]))),
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
    // One statement for both organizations, and org_a in it once.
    expect(reads.map((read) => read.organizationIds)).toEqual([['org_a', 'org_b']]);
    reads.forEach((read) => read.finish(declared));
    const [known, unknown, other] = await Promise.all(admissions);
    expect(known.kind).toBe('accepted');
    expect(unknown.kind).toBe('refused');
    expect(other.kind).toBe('accepted');
    // And kept: a later event reads nothing.
    await catalog.admit('org_a', 'order.created', {});
    expect(reads).toHaveLength(1);
  });

  it('admits at once only with the catalog in this process, and a stale one is read again behind it', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, {
      eventTypes: { cacheMs: 0 },
    } as HookbaseConfig);
    // Nothing here yet: no answer without a read, and asking starts none.
    expect(catalog.admitKnown('org_a', 'order.created', {})).toBeUndefined();
    await settle();
    expect(reads).toHaveLength(0);
    const first = catalog.admit('org_a', 'order.created', {});
    await settle();
    reads[0].finish(declared);
    await first;
    expect(catalog.admitKnown('org_a', 'order.created', {})).toEqual({ kind: 'accepted' });
    expect(catalog.admitKnown('org_a', 'order.unknown', {})).toMatchObject({
      kind: 'refused',
      code: 'EVENT_TYPE_UNKNOWN',
    });
    // Stale at once (a cache time of 0): served, and read again once in the background.
    await settle();
    expect(reads).toHaveLength(2);
    reads[1].finish({ policy: 'open', types: [] });
    await settle();
    expect(catalog.admitKnown('org_a', 'order.unknown', {})).toEqual({ kind: 'accepted' });
    // Another organization still has nothing here.
    expect(catalog.admitKnown('org_b', 'order.created', {})).toBeUndefined();
  });

  it('reads again for events after a change made during the first read', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, config);
    const before = catalog.admit('org_a', 'order.created', {});
    await settle();
    catalog.forget('org_a');
    const after = catalog.admit('org_a', 'order.created', {});
    await settle();
    // The read after the change waits for the one under way, then goes on its own.
    expect(reads).toHaveLength(1);
    reads[0].finish(declared);
    await settle();
    expect(reads).toHaveLength(2);
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

  it('reads stale catalogs of many organizations again in one statement, serving the old ones meanwhile, and one that is gone as open', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, {
      eventTypes: { cacheMs: 0 },
    } as HookbaseConfig);
    const organizations = Array.from({ length: 50 }, (_, n) => `org_${n}`);
    const first = Promise.all(organizations.map((id) => catalog.admit(id, 'order.unknown', {})));
    await settle();
    expect(reads).toHaveLength(1);
    reads[0].finish(declared);
    expect((await first).every((admission) => admission.kind === 'refused')).toBe(true);

    // Stale at once (cacheMs 0): every event is answered from the copy while one read refreshes all.
    const again = await Promise.all(
      organizations.map((id) => catalog.admit(id, 'order.unknown', {})),
    );
    expect(again.every((admission) => admission.kind === 'refused')).toBe(true);
    await settle();
    expect(reads).toHaveLength(2);
    expect(reads[1].organizationIds).toEqual(organizations);
    reads[1].finish({ policy: 'open', types: [] });
    await settle();
    expect((await catalog.admit('org_7', 'order.unknown', {})).kind).toBe('accepted');
  });

  it('serves the old copy when a refresh fails, and reads again later', async () => {
    const { repository, reads } = slowRepository();
    const catalog = new EventTypeCatalog(repository, {
      eventTypes: { cacheMs: 0 },
    } as HookbaseConfig);
    const first = catalog.admit('org_a', 'order.unknown', {});
    await settle();
    reads[0].finish(declared);
    expect((await first).kind).toBe('refused');
    expect((await catalog.admit('org_a', 'order.unknown', {})).kind).toBe('refused');
    await settle();
    reads[1].finish(new Error('store gone'));
    await settle();
    expect((await catalog.admit('org_a', 'order.unknown', {})).kind).toBe('refused');
    await settle();
    expect(reads).toHaveLength(3);
  });

  describe('with the clock moved by the test', () => {
    beforeEach(() => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
      jest.setSystemTime(0);
    });
    afterEach(() => jest.useRealTimers());

    /** A catalog of 1 s; each organization's first read finished at the time the test is at. */
    async function readAt(
      catalog: EventTypeCatalog,
      reads: ReturnType<typeof slowRepository>['reads'],
      organizationIds: string[],
    ) {
      const admitted = Promise.all(
        organizationIds.map((id) => catalog.admit(id, 'order.created', {})),
      );
      await settle();
      reads[reads.length - 1].finish(declared);
      await admitted;
    }

    it('refreshes a stale catalog together with the ones in use that go stale within half the cache time, and leaves the unused and the fresh out', async () => {
      const { repository, reads } = slowRepository();
      const catalog = new EventTypeCatalog(repository, {
        eventTypes: { cacheMs: 1_000 },
      } as HookbaseConfig);
      await readAt(catalog, reads, ['org_a', 'org_idle']);
      jest.setSystemTime(400);
      await readAt(catalog, reads, ['org_soon']);
      jest.setSystemTime(700);
      await readAt(catalog, reads, ['org_late']);
      expect(reads).toHaveLength(3);

      // Every one but org_idle publishes again while fresh: nothing is read.
      jest.setSystemTime(900);
      for (const id of ['org_soon', 'org_late']) await catalog.admit(id, 'order.created', {});
      await settle();
      expect(reads).toHaveLength(3);

      // org_a goes stale: org_soon (stale at 1,400) joins its read; org_late (1,700) is fresh past
      // half the cache time and org_idle has had no event since it was read.
      jest.setSystemTime(1_001);
      expect((await catalog.admit('org_a', 'order.created', {})).kind).toBe('accepted');
      await settle();
      expect(reads.map((read) => read.organizationIds)).toHaveLength(4);
      expect(reads[3].organizationIds).toEqual(['org_a', 'org_soon']);
      reads[3].finish({ policy: 'declared', types: [] });
      await settle();

      // Both hold what that read found from then on, org_soon before its own copy went stale.
      jest.setSystemTime(1_100);
      expect((await catalog.admit('org_soon', 'order.created', {})).kind).toBe('refused');
      expect((await catalog.admit('org_a', 'order.created', {})).kind).toBe('refused');
      expect((await catalog.admit('org_late', 'order.created', {})).kind).toBe('accepted');
      await settle();
      expect(reads).toHaveLength(4);

      // org_idle is still served its copy when it publishes again, and read again then.
      jest.setSystemTime(1_200);
      expect((await catalog.admit('org_idle', 'order.created', {})).kind).toBe('accepted');
      await settle();
      expect(reads).toHaveLength(5);
      // org_late (used at 1,100, stale at 1,700) goes along.
      expect(reads[4].organizationIds).toEqual(['org_idle', 'org_late']);
    });

    it('keeps a change made through this process during an early refresh', async () => {
      const { repository, reads } = slowRepository();
      const catalog = new EventTypeCatalog(repository, {
        eventTypes: { cacheMs: 1_000 },
      } as HookbaseConfig);
      await readAt(catalog, reads, ['org_a']);
      jest.setSystemTime(300);
      await readAt(catalog, reads, ['org_b']);
      await catalog.admit('org_b', 'order.created', {});
      jest.setSystemTime(1_001);
      await catalog.admit('org_a', 'order.created', {});
      await settle();
      expect(reads[2].organizationIds).toEqual(['org_a', 'org_b']);
      // org_b's catalog changes here while the read that took it early is under way.
      catalog.forget('org_b');
      const after = catalog.admit('org_b', 'order.created', {});
      await settle();
      reads[2].finish(declared);
      await settle();
      // Its own read after the change goes on: the early one does not stand in for it.
      expect(reads[3].organizationIds).toEqual(['org_b']);
      reads[3].finish({ policy: 'declared', types: [] });
      expect((await after).kind).toBe('refused');
      expect((await catalog.admit('org_b', 'order.created', {})).kind).toBe('refused');
    });
  });
});
