import {
  DynamicModule,
  INestApplicationContext,
  Logger,
  Module,
  OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError, ConfigModule, HookbaseConfig, loadConfig } from '@hookbase/config';
import { activeTraceId } from './active-trace-id';
import { NestLoggerAdapter } from './nest-logger.adapter';
import { createServiceLogger } from './service-logger';
import { startTracing, Tracing } from './tracing';
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

/** Flushes the spans still buffered when the application closes. */
class TracingShutdown implements OnApplicationShutdown {
  constructor(private readonly tracing: Tracing) {}

  async onApplicationShutdown(): Promise<void> {
    await this.tracing.shutdown();
  }
}

/**
 * Where every log line of the process goes: Nest's own, each `new Logger(context)`'s, and
 * kafkajs's (through `createKafka`). Set before anything logs, so no line escapes the format.
 */
function useServiceLogger(
  service: string,
  logging: Pick<HookbaseConfig, 'logLevel' | 'logFormat'>,
  env: Record<string, string | undefined>,
): NestLoggerAdapter {
  const adapter = new NestLoggerAdapter(
    createServiceLogger({
      service,
      level: logging.logLevel,
      format: logging.logFormat,
      traceId: activeTraceId,
      colorize: logging.logFormat === 'pretty' && process.stdout.isTTY && !env.NO_COLOR,
    }),
  );
  Logger.overrideLogger(adapter);
  // Node's process warnings (deprecations, a library's notices) become log lines like any other,
  // instead of free text on stderr.
  const warnings = new Logger('process');
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    warnings.warn({ message: warning.message, name: warning.name }),
  );
  return adapter;
}

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
      // The configuration that says how to log is what failed: say so as JSON, unless readable
      // lines were asked for.
      useServiceLogger(
        definition.name,
        { logLevel: 'info', logFormat: env.LOG_FORMAT === 'pretty' ? 'pretty' : 'json' },
        env,
      );
      logger.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const serviceLogger = useServiceLogger(definition.name, config, env);
  const tracing = startTracing(definition.name, env);
  const root: DynamicModule = {
    module: ServiceRoot,
    providers: [{ provide: TracingShutdown, useValue: new TracingShutdown(tracing) }],
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
  const app = await NestFactory.createApplicationContext(root, { logger: serviceLogger });
  app.enableShutdownHooks();
  await app.init();
  logger.log('started');
  return { app, config };
}
