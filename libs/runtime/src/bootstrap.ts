import { DynamicModule, INestApplicationContext, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, ConfigModule, HookbaseConfig, loadConfig } from '@hookbase/config';
import { nestLogLevels } from './log-levels';
import { OpsModule } from './ops.module';

/**
 * Serves a service's root module over HTTP and answers where it listens. Given by the services
 * that serve HTTP (`serveHttp` of the web library), so this library, and the workers that only
 * consume Kafka, never load the HTTP stack.
 */
export type HttpServing = (
  root: DynamicModule,
  config: HookbaseConfig,
) => Promise<{ app: INestApplicationContext; url: string }>;

export interface ServiceDefinition {
  /** Name used in logs and as PostgreSQL application_name. */
  name: string;
  /** How it serves HTTP (ingest, api, standalone); absent when it only consumes Kafka (fanout, dispatcher, dlq). */
  http?: HttpServing;
  /** Checks beyond the schema that this service needs (e.g. an admin token). */
  checkConfig?: (config: HookbaseConfig) => void;
  imports: (config: HookbaseConfig) => DynamicModule['imports'];
}

@Module({})
class ServiceRoot {}

/**
 * Starts one service: configuration read and validated once (a bad value stops the process with
 * every problem listed), then the Nest application built from the service's modules.
 */
export async function bootstrapService(
  definition: ServiceDefinition,
  env: Record<string, string | undefined>,
): Promise<{ app: INestApplicationContext; url?: string; config: HookbaseConfig }> {
  const logger = new Logger(definition.name);
  let config: HookbaseConfig;
  try {
    config = loadConfig(env);
    definition.checkConfig?.(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      logger.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const root: DynamicModule = {
    module: ServiceRoot,
    imports: [
      ConfigModule.forRoot(config),
      // Workers answer health on a port of their own; HTTP services on their main port.
      OpsModule.forService({ ownServer: !definition.http }),
      ...(definition.imports(config) ?? []),
    ],
  };
  if (definition.http) {
    const { app, url } = await definition.http(root, config);
    logger.log(`listening on ${url}`);
    return { app, url, config };
  }
  const app = await NestFactory.createApplicationContext(root, { logger: nestLogLevels(config) });
  app.enableShutdownHooks();
  await app.init();
  logger.log('started');
  return { app, config };
}
