import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type {
  EndpointKind,
  EndpointStatus,
  RecipientEndpoint,
  RetryPolicy,
} from '@hookbase/domain';
import { deepFreeze, KeptByVersion } from './kept-by-version';
import { NamedStatement } from './named-statement';
import {
  NO_RECIPIENTS_VERSION,
  RECIPIENT_VERSIONS_SQL,
  type RecipientVersions,
} from './recipient-versions';

/** The version of each organization's endpoints (see RECIPIENT_VERSIONS_SQL). */
const RECIPIENT_VERSIONS = new NamedStatement<{ organization_id: string; version: string }>(
  'hookbase-recipient-versions',
  `${RECIPIENT_VERSIONS_SQL} WHERE organization_id = ANY($1) GROUP BY organization_id`,
);

/**
 * The fan-out's reads of endpoints: who can receive an organization's events now, kept by version
 * (ADR 0040), and the routings that edits and deletions replaced, for events accepted before them
 * (ADR 0002).
 */
@Injectable()
export class RecipientRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The endpoints of these organizations that can receive new messages, for recipient resolution;
   * with `onlyIds`, only those of them (events that name their endpoints need no others). With
   * them, when each organization's routings last changed (`RoutingChanges`): an event accepted
   * before then needs the past routings too (pastRoutings).
   *
   * Read for every fan-out batch, so an organization's recipients are kept by a version of all its
   * endpoints' configuration versions (ADR 0040): one small statement reads the versions, and only
   * organizations whose endpoints changed (or that are new to the process) are read in full.
   */
  async liveRecipients(
    organizationIds: readonly string[],
    onlyIds?: readonly string[],
  ): Promise<LiveRecipients> {
    if (organizationIds.length === 0 || onlyIds?.length === 0) {
      return { recipients: [], routingChangedAt: new Map() };
    }
    if (onlyIds) {
      const read = await this.readRecipients(organizationIds, onlyIds);
      return {
        recipients: [...read.values()].flatMap((org) => org.endpoints),
        routingChangedAt: new Map([...read].map(([id, org]) => [id, org.routingChangedAt])),
      };
    }
    const rows = await RECIPIENT_VERSIONS.run(this.dataSource, [[...organizationIds]]);
    const versions = new Map(rows.map((row) => [row.organization_id, row.version]));
    const recipients: RecipientEndpoint[] = [];
    const routingChangedAt = new Map<string, number>();
    const changed = new Map<string, string>();
    for (const organizationId of new Set(organizationIds)) {
      const version = versions.get(organizationId);
      // None is kept too, so that the next event of an organization without endpoints can be
      // recorded against its version (keptRecipients) like any other.
      if (version === undefined) {
        this.recipients.put(organizationId, NO_RECIPIENTS_VERSION, NO_RECIPIENTS);
        continue;
      }
      const kept = this.recipients.get(organizationId, version);
      if (!kept) {
        changed.set(organizationId, version);
        continue;
      }
      for (const recipient of kept.endpoints) recipients.push(recipient);
      routingChangedAt.set(organizationId, kept.routingChangedAt);
    }
    if (changed.size === 0) return { recipients, routingChangedAt };
    const read = await this.readRecipients([...changed.keys()]);
    for (const [organizationId, version] of changed) {
      const organization = read.get(organizationId)!;
      this.recipients.put(
        organizationId,
        version,
        deepFreeze(organization),
        Math.max(1, organization.endpoints.length),
      );
      for (const recipient of organization.endpoints) recipients.push(recipient);
      routingChangedAt.set(organizationId, organization.routingChangedAt);
    }
    return { recipients, routingChangedAt };
  }

  /**
   * The recipients of these organizations as liveRecipients last read them, and the versions they
   * were read at, without reading anything; undefined when any of them has none kept. They may be
   * out of date: the caller records its messages against those versions (`recordEvents`), which
   * refuses when any of them moved, and then reads them with liveRecipients.
   */
  keptRecipients(
    organizationIds: readonly string[],
  ): (LiveRecipients & { versions: RecipientVersions }) | undefined {
    const unique = [...new Set(organizationIds)];
    const recipients: RecipientEndpoint[] = [];
    const routingChangedAt = new Map<string, number>();
    const versions: string[] = [];
    for (const organizationId of unique) {
      const kept = this.recipients.latest(organizationId);
      if (!kept) return undefined;
      for (const recipient of kept.value.endpoints) recipients.push(recipient);
      routingChangedAt.set(organizationId, kept.value.routingChangedAt);
      versions.push(kept.version);
    }
    return {
      recipients,
      routingChangedAt,
      versions: { organizationIds: unique, versions },
    };
  }

  /**
   * The routings of these organizations' endpoints that were replaced after `since` (by an edit of
   * their types, channels or filter, or by their deletion), each as a `RecipientEndpoint` with the
   * routing it had and `replacedAt`; with `onlyIds`, of those endpoints only. Disabled endpoints'
   * are left out, as liveRecipients leaves out the endpoints.
   */
  async pastRoutings(
    organizationIds: readonly string[],
    since: Date,
    onlyIds?: readonly string[],
  ): Promise<RecipientEndpoint[]> {
    if (organizationIds.length === 0 || onlyIds?.length === 0) return [];
    const rows: (RecipientRow & { replaced_at: Date })[] = await this.dataSource.query(
      `SELECT e.id, e.organization_id, e.kind, e.status, to_json(h.event_types) AS event_types,
              to_json(h.channels) AS channels, h.filter, e.application_id, e.retry, e.operational,
              e.created_at, h.replaced_at
         FROM endpoint_routing_history h JOIN endpoints e ON e.id = h.endpoint_id
        WHERE h.organization_id = ANY($1) AND h.replaced_at > $2 AND e.status <> 'disabled'
          ${onlyIds ? 'AND h.endpoint_id = ANY($3)' : ''}
        ORDER BY h.replaced_at`,
      onlyIds ? [[...organizationIds], since, [...onlyIds]] : [[...organizationIds], since],
    );
    return rows.map((row) => ({ ...toRecipient(row), replacedAt: row.replaced_at.getTime() }));
  }

  /** The recipients liveRecipients read, by organization, at the version of its endpoints. */
  private readonly recipients = new KeptByVersion<OrganizationRecipients>(100_000);

  /** Each organization's live endpoints (`onlyIds`: those of them) and its last routing change. */
  private async readRecipients(
    organizationIds: readonly string[],
    onlyIds?: readonly string[],
  ): Promise<Map<string, OrganizationRecipients>> {
    // The organizations' last routing changes come in the same statement, as rows of their own
    // (no endpoint id): an organization whose only endpoint was deleted has no endpoint row.
    const rows: (Partial<RecipientRow> & { organization_id: string; changed_at: Date | null })[] =
      await this.dataSource.query(
        `WITH live AS (
           SELECT id, organization_id, kind, status, to_json(event_types) AS event_types,
                  to_json(channels) AS channels, filter, application_id, retry, operational,
                  created_at FROM endpoints
            WHERE organization_id = ANY($1) AND deleted_at IS NULL AND status <> 'disabled'
              ${onlyIds ? 'AND id = ANY($2)' : ''}),
         changed AS (
           SELECT organization_id, max(replaced_at) AS changed_at FROM endpoint_routing_history
            WHERE organization_id = ANY($1) GROUP BY organization_id)
         SELECT live.*, NULL::timestamptz AS changed_at FROM live
         UNION ALL
         SELECT NULL, organization_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                changed_at FROM changed`,
        onlyIds ? [[...organizationIds], [...onlyIds]] : [[...organizationIds]],
      );
    const byOrganization = new Map<string, OrganizationRecipients>(
      organizationIds.map((id) => [id, { endpoints: [], routingChangedAt: -Infinity }]),
    );
    for (const row of rows) {
      const organization = byOrganization.get(row.organization_id);
      if (!organization) continue;
      if (row.changed_at) organization.routingChangedAt = row.changed_at.getTime();
      else organization.endpoints.push(toRecipient(row as RecipientRow));
    }
    return byOrganization;
  }
}

/** An organization's endpoints as the fan-out resolves recipients from, and its last change. */
interface OrganizationRecipients {
  endpoints: RecipientEndpoint[];
  /** When a routing of its endpoints was last replaced (ms; -Infinity: never). */
  routingChangedAt: number;
}

/** The organization without endpoints, as kept. */
const NO_RECIPIENTS: OrganizationRecipients = deepFreeze({
  endpoints: [],
  routingChangedAt: -Infinity,
});

/**
 * Live endpoints for recipient resolution, and when each organization's routings were last
 * replaced (ms; -Infinity: never): an event of it accepted before then may have had other
 * recipients, found with pastRoutings.
 */
export interface LiveRecipients {
  recipients: RecipientEndpoint[];
  routingChangedAt: ReadonlyMap<string, number>;
}

/** An endpoint's row as read for recipient resolution. */
interface RecipientRow {
  id: string;
  organization_id: string;
  kind: EndpointKind;
  status: EndpointStatus;
  event_types: string[];
  channels: string[];
  filter: Record<string, unknown> | null;
  application_id: string | null;
  retry: RetryPolicy | null;
  operational: boolean;
  created_at: Date;
}

function toRecipient(row: RecipientRow): RecipientEndpoint {
  return {
    id: row.id,
    organizationId: row.organization_id,
    kind: row.kind,
    status: row.status,
    eventTypes: row.event_types,
    channels: row.channels,
    filter: row.filter,
    applicationId: row.application_id,
    retry: row.retry,
    operational: row.operational,
    createdAt: row.created_at.getTime(),
  };
}
