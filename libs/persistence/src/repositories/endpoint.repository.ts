import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, IsNull, MoreThan } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { DomainError, EndpointStatus, newId } from '@hookbase/domain';
import { SECRET_SEALER, type SecretSealer } from '../endpoint-secret-sealer';
import { EndpointEntity, EndpointSecretEntity } from '../entities';
import { deepFreeze, KeptByVersion } from './kept-by-version';
import { KeptEndpoint, KeptSecret, secretsSigningAt } from './kept-endpoint';
import { NamedStatement } from './named-statement';
import { Page, toPage } from './page';

/**
 * The secrets that sign now for each endpoint of `$1` (current, or retired after `$2`), newest
 * first: read for every dispatcher intake, so a named statement without an entity to build.
 */
const SIGNING_SECRETS = new NamedStatement<{ endpointId: string; secret: string }>(
  'hookbase-signing-secrets',
  `SELECT endpoint_id AS "endpointId", secret FROM endpoint_secrets
    WHERE endpoint_id = ANY($1) AND (expires_at IS NULL OR expires_at > $2)
    ORDER BY created_at DESC`,
);

/**
 * The health columns of an endpoint: they change with attempts, so they are read fresh for every
 * delivery and are not part of its configuration version (the migration's trigger leaves them
 * out under their column names).
 */
interface EndpointHealthColumns {
  consecutiveFailures: number;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
}

/** An endpoint's configuration version and its health columns, as read before a delivery. */
export type EndpointVersion = { id: string; version: string } & EndpointHealthColumns;

/** Each endpoint's configuration version and health, read before every delivery. */
const FOR_DELIVERY_VERSIONS = new NamedStatement<EndpointVersion>(
  'hookbase-endpoint-versions-for-delivery',
  `SELECT id, config_version AS "version", consecutive_failures AS "consecutiveFailures",
          failing_since AS "failingSince", last_success_at AS "lastSuccessAt"
     FROM endpoints WHERE id = ANY($1)`,
);

type FullDeliveryRow = Partial<EndpointEntity> & {
  version: string;
  signingSecrets: { secret: string; expiresAt: string | null }[];
};

function healthOf(columns: Partial<EndpointEntity>): EndpointHealthColumns {
  return {
    consecutiveFailures: columns.consecutiveFailures!,
    failingSince: columns.failingSince ?? null,
    lastSuccessAt: columns.lastSuccessAt ?? null,
  };
}

function withoutHealth(columns: Partial<EndpointEntity>): Partial<EndpointEntity> {
  const { consecutiveFailures, failingSince, lastSuccessAt, ...rest } = columns;
  void consecutiveFailures;
  void failingSince;
  void lastSuccessAt;
  return rest;
}

/** An endpoint's failure streak after failed attempts, as recordFailures answers it. */
export interface FailureStreak {
  consecutiveFailures: number;
  failingSince: Date;
  status: EndpointStatus;
  /** The organization's auto-disable period; null: the default. */
  autoDisableAfterMs: number | null;
}

export type NewEndpoint = Omit<EndpointEntity, 'id' | 'createdAt' | 'updatedAt' | 'deletedAt'>;

/**
 * More writes in the transaction of an endpoint's change (its operational events, in the
 * outbox): they commit with it or not at all.
 */
export type AlsoInTransaction = (tx: EntityManager, endpoint: EndpointEntity) => Promise<void>;

@Injectable()
export class EndpointRepository {
  private readonly logger = new Logger(EndpointRepository.name);

  /** Signing secrets go in and come out in clear text; they are stored sealed (ADR 0017). */
  constructor(
    private readonly dataSource: DataSource,
    @Inject(SECRET_SEALER) private readonly sealer: SecretSealer,
  ) {}

  private get repo() {
    return this.dataSource.getRepository(EndpointEntity);
  }

  /**
   * Creates an endpoint unless the organization already has `maxEndpoints` that are not deleted
   * (403 ENDPOINT_LIMIT_REACHED). Creates of one organization are serialised by a transaction
   * lock, so concurrent ones cannot pass the limit together.
   */
  async create(
    input: NewEndpoint,
    secret: string | null,
    maxEndpoints = Number.POSITIVE_INFINITY,
    also?: AlsoInTransaction,
  ): Promise<EndpointEntity> {
    const now = new Date();
    const endpoint = this.repo.create({
      ...input,
      id: newId('ep'),
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    });
    await this.dataSource.transaction(async (tx) => {
      if (Number.isFinite(maxEndpoints)) {
        await tx.query(`SELECT pg_advisory_xact_lock(hashtext('endpoints:' || $1))`, [
          input.organizationId,
        ]);
        const [{ count }]: { count: number }[] = await tx.query(
          'SELECT count(*)::int AS count FROM endpoints WHERE organization_id = $1 AND deleted_at IS NULL',
          [input.organizationId],
        );
        if (count >= maxEndpoints) {
          throw new DomainError(
            'ENDPOINT_LIMIT_REACHED',
            `This organization has ${count} endpoints, the most its plan allows (${maxEndpoints}); delete one first`,
            { limit: maxEndpoints },
          );
        }
      }
      await tx
        .getRepository(EndpointEntity)
        .insert(endpoint as QueryDeepPartialEntity<EndpointEntity>);
      if (secret) {
        await tx.getRepository(EndpointSecretEntity).insert({
          id: newId('sec'),
          endpointId: endpoint.id,
          secret: this.sealer.seal(secret, endpoint.id),
          createdAt: now,
          expiresAt: null,
        });
      }
      await also?.(tx, endpoint);
    });
    return endpoint;
  }

  /**
   * Live endpoints of one sort, oldest first: customer ones, or with `operational` operational ones;
   * with `applicationId` only that application's.
   */
  async list(
    organizationId: string,
    options: { limit: number; cursor?: string; applicationId?: string; operational?: boolean },
  ): Promise<Page<EndpointEntity>> {
    const rows = await this.repo.find({
      where: {
        organizationId,
        deletedAt: IsNull(),
        operational: options.operational ?? false,
        ...(options.applicationId ? { applicationId: options.applicationId } : {}),
        ...(options.cursor ? { id: MoreThan(options.cursor) } : {}),
      },
      order: { id: 'ASC' },
      take: options.limit + 1,
    });
    return toPage(rows, options.limit);
  }

  findLive(organizationId: string, id: string): Promise<EndpointEntity | null> {
    return this.repo.findOneBy({ organizationId, id, deletedAt: IsNull() });
  }

  /** The live endpoints of an application. */
  liveOfApplication(organizationId: string, applicationId: string): Promise<EndpointEntity[]> {
    return this.repo.find({
      where: { organizationId, applicationId, deletedAt: IsNull() },
      order: { id: 'ASC' },
    });
  }

  /**
   * Endpoints by id, deleted ones included: the dispatcher must see a deletion. Read for every
   * dispatcher intake, so as a named statement whose rows become entities without TypeORM's
   * query builder (the columns are the entity's, from its metadata).
   */
  async findByIds(ids: readonly string[]): Promise<EndpointEntity[]> {
    if (ids.length === 0) return [];
    this.byIds ??= new NamedStatement<Partial<EndpointEntity>>(
      'hookbase-endpoints-by-id',
      `SELECT ${this.endpointColumns('endpoints')} FROM endpoints WHERE id = ANY($1)`,
    );
    const rows = await this.byIds.run(this.dataSource, [[...ids]]);
    return rows.map((row) => Object.assign(new EndpointEntity(), row));
  }

  /**
   * Every column of the endpoint entity, named as its properties, for reads that build entities
   * without TypeORM. Arrays come as JSON: read with `JSON.parse`, which allocates a small part of
   * what node-postgres's parser of PostgreSQL's array text does (read for every delivery).
   */
  private endpointColumns(table: string): string {
    return this.dataSource
      .getMetadata(EndpointEntity)
      .columns.map((column) =>
        column.isArray
          ? `to_json(${table}.${column.databaseName}) AS "${column.propertyName}"`
          : `${table}.${column.databaseName} AS "${column.propertyName}"`,
      )
      .join(', ');
  }

  /** findByIds's statement, made on first use (it needs the data source's metadata). */
  private byIds?: NamedStatement<Partial<EndpointEntity>>;

  /**
   * What the dispatcher reads before its attempts: the endpoints by id (deleted ones included, as
   * `findByIds`) and the secrets that sign for each at `now`, newest first and opened (as
   * `signingSecrets`). An endpoint that does not exist is in neither map.
   *
   * What was read is kept by configuration version (ADR 0040): a first statement reads each
   * endpoint's version and health columns, and only the endpoints whose version changed since the
   * last read (or that were never read) are read in full, in a second statement. A caller that
   * read the versions and health in a statement of its own (the dispatcher's intake) gives them
   * as `versions`, and the first statement is not made: an endpoint not among them is taken as
   * not existing.
   */
  async forDelivery(
    ids: readonly string[],
    now: Date,
    versions?: readonly EndpointVersion[],
  ): Promise<{ endpoints: Map<string, EndpointEntity>; secrets: Map<string, string[]> }> {
    const endpoints = new Map<string, EndpointEntity>();
    const secrets = new Map<string, string[]>();
    if (ids.length === 0) return { endpoints, secrets };
    const at = now.getTime();
    let current: readonly EndpointVersion[];
    if (versions) {
      const wanted = new Set(ids);
      current = versions.filter((version) => wanted.has(version.id));
    } else current = await FOR_DELIVERY_VERSIONS.run(this.dataSource, [[...ids]]);
    const changed: string[] = [];
    for (const { id, version, ...health } of current) {
      // Secrets retired before the read were not read: an earlier time reads again.
      const kept = this.kept.get(id, version);
      if (kept && kept.readAt <= at) this.deliverable(endpoints, secrets, kept, health, at);
      else changed.push(id);
    }
    if (changed.length === 0) return { endpoints, secrets };
    this.fullForDelivery ??= new NamedStatement<FullDeliveryRow>(
      'hookbase-endpoints-for-delivery-full',
      `SELECT ${this.endpointColumns('e')}, e.config_version AS "version",
              to_json(ARRAY(SELECT json_build_object('secret', s.secret, 'expiresAt', s.expires_at)
                              FROM endpoint_secrets s
                             WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > $2)
                             ORDER BY s.created_at DESC)) AS "signingSecrets"
         FROM endpoints e WHERE e.id = ANY($1)`,
    );
    const rows = await this.fullForDelivery.run(this.dataSource, [changed, now]);
    for (const { version, signingSecrets, ...columns } of rows) {
      const id = columns.id!;
      const opened: KeptSecret[] = [];
      for (const { secret, expiresAt } of signingSecrets) {
        const [open] = this.openSigningSecrets(id, [secret]);
        if (open !== undefined) {
          opened.push({ secret: open, expiresAt: expiresAt ? Date.parse(expiresAt) : null });
        }
      }
      const kept: KeptEndpoint = {
        readAt: at,
        columns: deepFreeze(withoutHealth(columns)),
        secrets: opened,
      };
      // An endpoint with a secret that cannot be opened is read again each time (and logged), as
      // it was before anything was kept: the key may come back.
      if (opened.length === signingSecrets.length) this.kept.put(id, version, kept);
      this.deliverable(endpoints, secrets, kept, healthOf(columns), at);
    }
    return { endpoints, secrets };
  }

  /** Adds a kept endpoint, with its health as read now, to forDelivery's answer. */
  private deliverable(
    endpoints: Map<string, EndpointEntity>,
    secrets: Map<string, string[]>,
    kept: KeptEndpoint,
    health: EndpointHealthColumns,
    at: number,
  ): void {
    const endpoint = Object.assign(new EndpointEntity(), kept.columns, health);
    endpoints.set(endpoint.id, endpoint);
    const signing = secretsSigningAt(kept, at);
    if (signing.length > 0) secrets.set(endpoint.id, signing);
  }

  /** forDelivery's second statement, made on first use (it needs the data source's metadata). */
  private fullForDelivery?: NamedStatement<FullDeliveryRow>;

  /** The endpoints forDelivery read, by configuration version. */
  private readonly kept = new KeptByVersion<KeptEndpoint>(10_000);

  /** The organization's live operational endpoints, for operational event routing. */
  /**
   * The organization's operational endpoints, deleted ones too (`deleted`): nothing is reported
   * about an operational endpoint, even one deleted since; only live ones receive.
   */
  async operationalEndpoints(
    organizationId: string,
    /** A transaction to read in (its connection), or the pool. */
    runner: Pick<EntityManager, 'query'> = this.dataSource,
  ): Promise<{ id: string; status: EndpointStatus; eventTypes: string[]; deleted: boolean }[]> {
    const rows: {
      id: string;
      status: EndpointStatus;
      event_types: string[];
      deleted: boolean;
    }[] = await runner.query(
      `SELECT id, status, event_types, deleted_at IS NOT NULL AS deleted FROM endpoints
        WHERE organization_id = $1 AND operational ORDER BY id`,
      [organizationId],
    );
    return rows.map((row) => ({
      id: row.id,
      status: row.status,
      eventTypes: row.event_types,
      deleted: row.deleted,
    }));
  }

  /**
   * A failed attempt: the endpoint's streak grows (begun at `at` when there was none). Returns the
   * streak, the status, and the organization's auto-disable period (null: the default), in one
   * round trip; undefined when the endpoint is gone.
   */
  async recordFailure(endpointId: string, at: Date): Promise<FailureStreak | undefined> {
    return (await this.recordFailures([{ endpointId, at }])).get(endpointId);
  }

  /**
   * Failed attempts, of one endpoint or many, in one statement: each endpoint's streak grows by
   * its number of failures (begun at the earliest `at` when there was none). Answers each
   * endpoint's streak after them, its status and its organization's auto-disable period; an
   * endpoint that is gone has no entry. The rows are locked in id order, as recordSuccesses does.
   */
  async recordFailures(
    failures: readonly { endpointId: string; at: Date }[],
  ): Promise<Map<string, FailureStreak>> {
    const byEndpoint = new Map<string, { count: number; first: Date }>();
    for (const { endpointId, at } of failures) {
      const known = byEndpoint.get(endpointId);
      if (!known) byEndpoint.set(endpointId, { count: 1, first: at });
      else {
        known.count++;
        if (at < known.first) known.first = at;
      }
    }
    const streaks = new Map<string, FailureStreak>();
    if (byEndpoint.size === 0) return streaks;
    // An UPDATE answers its rows and its count.
    const [rows]: [
      {
        id: string;
        consecutive_failures: number;
        failing_since: Date;
        status: EndpointStatus;
        auto_disable_after_ms: string | null;
      }[],
      number,
    ] = await this.dataSource.query(
      `WITH locked AS (
         SELECT id FROM endpoints WHERE id = ANY($1::text[]) AND deleted_at IS NULL
          ORDER BY id FOR UPDATE)
       UPDATE endpoints e
          SET consecutive_failures = e.consecutive_failures + f.n,
              failing_since = COALESCE(e.failing_since, f.first_at)
         FROM unnest($1::text[], $2::int[], $3::timestamptz[]) AS f(id, n, first_at), locked
        WHERE e.id = f.id AND locked.id = f.id
        RETURNING e.id, e.consecutive_failures, e.failing_since, e.status,
          (SELECT o.auto_disable_after_ms FROM organizations o WHERE o.id = e.organization_id)
            AS auto_disable_after_ms`,
      [
        [...byEndpoint.keys()],
        [...byEndpoint.values()].map((f) => f.count),
        [...byEndpoint.values()].map((f) => f.first.toISOString()),
      ],
    );
    for (const row of rows) {
      streaks.set(row.id, {
        consecutiveFailures: row.consecutive_failures,
        failingSince: new Date(row.failing_since),
        status: row.status,
        autoDisableAfterMs:
          row.auto_disable_after_ms === null ? null : Number(row.auto_disable_after_ms),
      });
    }
    return streaks;
  }

  /**
   * Successful attempts, of one endpoint or many, in one statement: each endpoint's streak ends and
   * its last success is the latest `at` given for it. The rows are locked in id order, so that two
   * dispatchers writing the same endpoints at once wait for each other instead of deadlocking.
   */
  async recordSuccesses(successes: readonly { endpointId: string; at: Date }[]): Promise<void> {
    const latest = new Map<string, Date>();
    for (const { endpointId, at } of successes) {
      const known = latest.get(endpointId);
      if (!known || at > known) latest.set(endpointId, at);
    }
    if (latest.size === 0) return;
    await this.dataSource.query(
      `WITH locked AS (
         SELECT id FROM endpoints WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE)
       UPDATE endpoints e
          SET consecutive_failures = 0, failing_since = NULL, last_success_at = s.at
         FROM unnest($1::text[], $2::timestamptz[]) AS s(id, at), locked
        WHERE e.id = s.id AND locked.id = s.id`,
      [[...latest.keys()], [...latest.values()].map((at) => at.toISOString())],
    );
  }

  /**
   * Disables an active endpoint whose streak began at or before `cutoff` (reason `failing`).
   * True when this call disabled it (a concurrent one, or a success in between, leaves it be).
   */
  async autoDisable(
    endpointId: string,
    cutoff: Date,
    at: Date,
    also?: (tx: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      const [rows]: [{ id: string }[]] = await tx.query(
        `UPDATE endpoints
            SET status = 'disabled', disabled_reason = 'failing', disabled_at = $3, updated_at = $3
          WHERE id = $1 AND status = 'active' AND deleted_at IS NULL AND failing_since <= $2
          RETURNING id`,
        [endpointId, cutoff, at],
      );
      if (rows.length !== 1) return false;
      await also?.(tx);
      return true;
    });
  }

  async save(endpoint: EndpointEntity, also?: AlsoInTransaction): Promise<EndpointEntity> {
    endpoint.updatedAt = new Date();
    if (!also) return this.repo.save(endpoint);
    return this.dataSource.transaction(async (tx) => {
      const saved = await tx.getRepository(EndpointEntity).save(endpoint);
      await also(tx, saved);
      return saved;
    });
  }

  /** Marks the endpoint deleted and clears its secrets in one transaction. */
  async softDelete(endpoint: EndpointEntity, also?: AlsoInTransaction): Promise<void> {
    const now = new Date();
    await this.dataSource.transaction(async (tx) => {
      await tx
        .getRepository(EndpointEntity)
        .update(endpoint.id, { deletedAt: now, updatedAt: now });
      await tx.getRepository(EndpointSecretEntity).delete({ endpointId: endpoint.id });
      await also?.(tx, endpoint);
    });
  }

  /** The newest secret that has not been retired. */
  async currentSecret(endpointId: string): Promise<string | null> {
    const row = await this.dataSource.getRepository(EndpointSecretEntity).findOne({
      where: { endpointId, expiresAt: IsNull() },
      order: { createdAt: 'DESC' },
    });
    return row ? this.sealer.open(row.secret, endpointId) : null;
  }

  /**
   * Secrets that sign now, per endpoint: the current one and any still in a rotation overlap.
   * One that cannot be opened (key missing or changed) is left out and logged.
   */
  async signingSecrets(endpointIds: readonly string[], now: Date): Promise<Map<string, string[]>> {
    const secrets = new Map<string, string[]>();
    if (endpointIds.length === 0) return secrets;
    const rows = await SIGNING_SECRETS.run(this.dataSource, [[...endpointIds], now]);
    const sealedBy = new Map<string, string[]>();
    for (const row of rows) {
      const sealed = sealedBy.get(row.endpointId);
      if (sealed) sealed.push(row.secret);
      else sealedBy.set(row.endpointId, [row.secret]);
    }
    for (const [endpointId, sealed] of sealedBy) {
      const opened = this.openSigningSecrets(endpointId, sealed);
      if (opened.length > 0) secrets.set(endpointId, opened);
    }
    return secrets;
  }

  /**
   * An endpoint's sealed signing secrets, opened, in their order. One that cannot be opened (the
   * key is missing or changed) cannot sign and is left out and logged; the others still sign, and
   * an endpoint left with none is retried by the dispatcher until the key is back.
   */
  private openSigningSecrets(endpointId: string, sealed: readonly string[]): string[] {
    const opened: string[] = [];
    for (const secret of sealed) {
      try {
        opened.push(this.sealer.open(secret, endpointId));
      } catch (error) {
        this.logger.error(
          `endpoint ${endpointId}: a signing secret cannot be opened: ${(error as Error).message}`,
        );
      }
    }
    return opened;
  }

  /**
   * Starts a rotation: the new secret signs from now; every older one signs until the overlap
   * ends at the latest (a rotation with no overlap, after a leak, retires them all at once).
   */
  async rotateSecret(endpointId: string, secret: string, overlapSeconds: number): Promise<void> {
    const now = new Date();
    const retireAt = new Date(now.getTime() + overlapSeconds * 1000);
    await this.dataSource.transaction(async (tx) => {
      await tx.query('DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND expires_at <= $2', [
        endpointId,
        now,
      ]);
      await tx.query(
        `UPDATE endpoint_secrets SET expires_at = LEAST(COALESCE(expires_at, $2), $2)
          WHERE endpoint_id = $1`,
        [endpointId, retireAt],
      );
      await tx.getRepository(EndpointSecretEntity).insert({
        id: newId('sec'),
        endpointId,
        secret: this.sealer.seal(secret, endpointId),
        createdAt: now,
        expiresAt: null,
      });
    });
  }
}
