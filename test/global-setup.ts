import { prepareTemplateDatabase, testEnvironment } from '@hookbase/testing';

/** Once per run: the migrated template database that every test file clones. */
export default async function globalSetup(): Promise<void> {
  await prepareTemplateDatabase(testEnvironment().databaseUrl);
}
