/**
 * A version of each organization's endpoints: their number and a sum of hashes of their ids and
 * configuration versions, so that any change of any of them (an insert, an update, a delete)
 * gives another version. An organization without endpoints has no row. Completed by the reader
 * with its `WHERE organization_id = ANY(…)` and `GROUP BY organization_id`.
 */
export const RECIPIENT_VERSIONS_SQL = `SELECT organization_id,
          count(*) || ':' || sum(hashtextextended(id || ':' || config_version, 0)) AS version
     FROM endpoints`;

/** The version of an organization without endpoints, where a version is written down. */
export const NO_RECIPIENTS_VERSION = '';

/**
 * The versions a fan-out planned its messages at, one per organization of the batch: checked by
 * the statement that records them (`EventRepository.recordEvents`), which records nothing when
 * any of them moved since.
 */
export interface RecipientVersions {
  organizationIds: readonly string[];
  /** At the same index: the version, or NO_RECIPIENTS_VERSION for an organization without any. */
  versions: readonly string[];
}
