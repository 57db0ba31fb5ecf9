import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An endpoint's configuration version: a new number from a sequence whenever anything the
 * dispatcher delivers with changes (any column but the health columns, or a signing secret), so
 * that a process may keep what it read and read again only the endpoints that changed. The health
 * columns change with attempts (once a minute per endpoint at most on success, on every failure)
 * and are read fresh every time instead.
 */
export class EndpointConfigVersion1765843200000 implements MigrationInterface {
  name = 'EndpointConfigVersion1765843200000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE SEQUENCE endpoint_config_versions`);
    await runner.query(`
      ALTER TABLE endpoints
        ADD COLUMN config_version bigint NOT NULL DEFAULT nextval('endpoint_config_versions')
    `);
    // A change of anything but health (and the version itself) takes a new version. A statement
    // that sets only config_version (the secrets' trigger below) keeps the value it set.
    await runner.query(`
      CREATE FUNCTION endpoint_config_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF to_jsonb(NEW) - '{consecutive_failures,failing_since,last_success_at,config_version}'::text[]
           IS DISTINCT FROM
           to_jsonb(OLD) - '{consecutive_failures,failing_since,last_success_at,config_version}'::text[]
        THEN
          NEW.config_version := nextval('endpoint_config_versions');
        END IF;
        RETURN NEW;
      END $$
    `);
    await runner.query(`
      CREATE TRIGGER endpoints_config_version BEFORE UPDATE ON endpoints
        FOR EACH ROW EXECUTE FUNCTION endpoint_config_version()
    `);
    // A signing secret added, retired, resealed or removed is a change of its endpoint.
    await runner.query(`
      CREATE FUNCTION endpoint_secret_config_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE endpoints SET config_version = nextval('endpoint_config_versions')
           WHERE id = OLD.endpoint_id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          UPDATE endpoints SET config_version = nextval('endpoint_config_versions')
           WHERE id = NEW.endpoint_id;
        END IF;
        RETURN NULL;
      END $$
    `);
    await runner.query(`
      CREATE TRIGGER endpoint_secrets_config_version AFTER INSERT OR UPDATE OR DELETE ON endpoint_secrets
        FOR EACH ROW EXECUTE FUNCTION endpoint_secret_config_version()
    `);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER endpoint_secrets_config_version ON endpoint_secrets`);
    await runner.query(`DROP FUNCTION endpoint_secret_config_version()`);
    await runner.query(`DROP TRIGGER endpoints_config_version ON endpoints`);
    await runner.query(`DROP FUNCTION endpoint_config_version()`);
    await runner.query(`ALTER TABLE endpoints DROP COLUMN config_version`);
    await runner.query(`DROP SEQUENCE endpoint_config_versions`);
  }
}
