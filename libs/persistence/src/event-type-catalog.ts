import { Inject, Injectable, Logger } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  GroupedWork,
  admitEvent,
  compileEventTypeSchema,
  DeclaredEventType,
  EventAdmission,
  EventTypePolicy,
  PayloadCheck,
} from '@hookbase/domain';
import { CatalogSnapshot, EventTypeRepository } from './repositories/event-type.repository';

/** One organization's catalog as this process keeps it. */
interface CachedCatalog {
  policy: EventTypePolicy;
  types: Map<string, DeclaredEventType & { version: number }>;
  /** Until when it is trusted without reading it again. */
  freshUntil: number;
  /** An event asked for it since it was read (it is in `usedSinceRead`). */
  used: boolean;
  /** The read under way, when one is. */
  refreshing?: Promise<void>;
}

/** Organizations whose catalogs are kept at most; past it the memory starts over. */
const MAX_ORGANIZATIONS = 10_000;
/** Organizations read together in one statement at most. */
const MAX_READ_TOGETHER = 500;
/** Catalogs looked at for an early read at most, so that a refresh costs little however many. */
const MAX_LOOKED_AT = 2_000;

/**
 * Admits events against their organization's policy and catalog (ADR 0031). Each process keeps
 * every organization's policy and compiled schemas for `HOOKBASE_EVENT_TYPE_CACHE_MS`, then reads
 * the catalog again in the background while the copy it has keeps serving; a schema is compiled
 * again only when its type's version moved. A change made through this process is seen at once
 * (`forget`); one made through another within the cache time.
 *
 * The read that refreshes a stale catalog also takes every other catalog in use that would go
 * stale within half the cache time (read early, so fresher, never older). The catalogs of
 * organizations publishing together so come to share one refresh: about one statement per cache
 * time for all of them, where each going stale on its own made one per organization.
 */
@Injectable()
export class EventTypeCatalog {
  private readonly logger = new Logger(EventTypeCatalog.name);
  private catalogs = new Map<string, CachedCatalog>();
  /** First reads under way, by organization: the events that arrive meanwhile share one. */
  private readonly firstReads = new Map<string, Promise<CachedCatalog | null>>();
  /**
   * Organizations whose catalog an event asked for since it was read, and which no read has taken
   * since: the candidates for an early read. Organizations that publish rarely pass through it
   * at once (their catalog is stale when asked for), so it holds about the ones publishing now.
   */
  private readonly usedSinceRead = new Set<string>();
  /**
   * Catalog reads, of any organizations, that are asked for while one is under way go together
   * in the next: with many organizations publishing, each one's catalog going stale every
   * `cacheMs` costs one statement per group, not one per organization.
   */
  private readonly reads: GroupedWork<string, CatalogSnapshot | null>;

  constructor(
    eventTypes: EventTypeRepository,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {
    this.reads = new GroupedWork<string, CatalogSnapshot | null>(
      async (organizationIds) => {
        const found = await eventTypes.snapshots(organizationIds);
        return organizationIds.map((id) => found.get(id) ?? null);
      },
      { maxItems: MAX_READ_TOGETHER },
    );
  }

  /**
   * Whether the organization accepts this event. An organization that does not exist is treated
   * as `open`: whoever asks has already established it exists (an API key, or the fan-out's
   * check of direct producers' records).
   */
  async admit(
    organizationId: string,
    eventType: string,
    payload: unknown,
  ): Promise<EventAdmission> {
    return admissionBy(await this.catalogOf(organizationId), eventType, payload);
  }

  /**
   * `admit` at once, when this process already has the organization's catalog (the hot path: no
   * promise per event); undefined when the catalog must be read first, and then `admit` waits.
   */
  admitKnown(
    organizationId: string,
    eventType: string,
    payload: unknown,
  ): EventAdmission | undefined {
    const catalog = this.kept(organizationId);
    return catalog && admissionBy(catalog, eventType, payload);
  }

  /** Drops this process's copy: the next event reads the catalog again. */
  forget(organizationId: string): void {
    this.catalogs.delete(organizationId);
    this.usedSinceRead.delete(organizationId);
    // A first read under way may predate the change: later events do not join it.
    this.firstReads.delete(organizationId);
  }

  private async catalogOf(organizationId: string): Promise<CachedCatalog | null> {
    const cached = this.kept(organizationId);
    if (cached) return cached;
    const under = this.firstReads.get(organizationId);
    if (under) return under;
    const read = this.load(organizationId);
    this.firstReads.set(organizationId, read);
    const done = () => {
      if (this.firstReads.get(organizationId) === read) this.firstReads.delete(organizationId);
    };
    read.then(done, done);
    return read;
  }

  /** The catalog this process keeps, marked as used (and read again in the background if stale). */
  private kept(organizationId: string): CachedCatalog | undefined {
    const cached = this.catalogs.get(organizationId);
    if (!cached) return undefined;
    if (!cached.used) {
      cached.used = true;
      this.usedSinceRead.add(organizationId);
    }
    const now = Date.now();
    // Stale: serve it while it is read again, so the hot path never waits on the store.
    if (cached.freshUntil <= now && !cached.refreshing) this.refresh(organizationId, now);
    return cached;
  }

  /** A first read: the organization has no catalog here yet. */
  private async load(organizationId: string): Promise<CachedCatalog | null> {
    const [snapshot] = await this.reads.run([organizationId]);
    return this.keep(organizationId, snapshot, undefined);
  }

  /**
   * Reads the stale catalog of `organizationId` again in the background, together with every
   * other one in use that goes stale within half the cache time. On failure the copies stay and
   * the next event after it tries again.
   */
  private refresh(organizationId: string, now: number): void {
    const horizon = now + this.config.eventTypes.cacheMs / 2;
    const due = new Map<string, CachedCatalog>([
      [organizationId, this.catalogs.get(organizationId)!],
    ]);
    this.usedSinceRead.delete(organizationId);
    let lookedAt = 0;
    for (const id of this.usedSinceRead) {
      if (due.size >= MAX_READ_TOGETHER || ++lookedAt > MAX_LOOKED_AT) break;
      const catalog = this.catalogs.get(id);
      if (!catalog || catalog.refreshing) this.usedSinceRead.delete(id);
      else if (catalog.freshUntil <= horizon) {
        due.set(id, catalog);
        this.usedSinceRead.delete(id);
      }
    }
    const ids = [...due.keys()];
    const read = this.reads.run(ids).then(
      (snapshots) => {
        ids.forEach((id, index) => this.keep(id, snapshots[index], due.get(id)));
      },
      (error: Error) => {
        this.logger.warn(`event type catalogs not refreshed: ${error.message}`);
        for (const [id, catalog] of due) {
          catalog.refreshing = undefined;
          if (this.catalogs.get(id) === catalog) this.usedSinceRead.add(id);
        }
      },
    );
    for (const catalog of due.values()) catalog.refreshing = read;
  }

  /** Keeps what was read in place of `previous` (none on a first read); null when it is gone. */
  private keep(
    organizationId: string,
    snapshot: CatalogSnapshot | null,
    previous: CachedCatalog | undefined,
  ): CachedCatalog | null {
    // A `forget` while reading wins: what was read may be older than the change.
    const current = previous === undefined || this.catalogs.get(organizationId) === previous;
    if (!snapshot) {
      if (current) this.catalogs.delete(organizationId);
      return null;
    }
    const catalog = this.compile(snapshot, previous);
    if (this.catalogs.size >= MAX_ORGANIZATIONS && !this.catalogs.has(organizationId)) {
      this.catalogs = new Map();
      this.usedSinceRead.clear();
    }
    if (current) this.catalogs.set(organizationId, catalog);
    return catalog;
  }

  private compile(snapshot: CatalogSnapshot, previous: CachedCatalog | undefined): CachedCatalog {
    const types = new Map<string, DeclaredEventType & { version: number }>();
    for (const type of snapshot.types) {
      const known = previous?.types.get(type.name);
      const check =
        snapshot.policy !== 'validated'
          ? null
          : known && known.version === type.version && known.check !== null
            ? known.check
            : this.lazyCheck(type.name, type.schema);
      types.set(type.name, { archived: type.archived, version: type.version, check });
    }
    return {
      policy: snapshot.policy,
      types,
      freshUntil: Date.now() + this.config.eventTypes.cacheMs,
      used: false,
    };
  }

  /** A schema's check, compiled when a payload first needs it (not for every type at load). */
  private lazyCheck(name: string, schema: unknown): PayloadCheck | null {
    if (schema === null || schema === undefined) return null;
    let check: PayloadCheck | undefined;
    return (payload) => (check ??= this.checkOf(name, schema))(payload);
  }

  private checkOf(name: string, schema: unknown): PayloadCheck {
    const compiled = compileEventTypeSchema(schema);
    if (compiled.ok) return compiled.check;
    // Schemas are checked when saved; one that no longer compiles refuses every payload.
    this.logger.error(`schema of event type ${name} does not compile: ${compiled.message}`);
    return () => [{ pointer: '/', keyword: 'schema', message: compiled.message }];
  }
}

/** An event's admission by its organization's catalog; no catalog (no such organization) is open. */
function admissionBy(
  catalog: CachedCatalog | null,
  eventType: string,
  payload: unknown,
): EventAdmission {
  if (!catalog || catalog.policy === 'open') return { kind: 'accepted' };
  return admitEvent(catalog.policy, eventType, catalog.types.get(eventType), payload);
}
