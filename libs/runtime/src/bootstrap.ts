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
import { ShutdownCoordinator } from './shutdown-coordinator';

/** Time beyond the drain for closing connections before a stuck stop is cut short. */
export const CLOSE_MARGIN_MS = 5_000;

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
    stopOnSignals(app, config, logger);
    logger.log(`listening on ${url}`);
    return { app, url, config };
  }
  const app = await NestFactory.createApplicationContext(root, { logger: serviceLogger });
  await app.init();
  stopOnSignals(app, config, logger);
  logger.log('started');
  return { app, config };
}

/**
 * SIGTERM or SIGINT stops the process in order and it exits 0: first it refuses new work
 * (readiness, HTTP), then its work drains (ShutdownCoordinator), then connections close. A stop
 * that has not ended by the drain time plus CLOSE_MARGIN_MS exits 1, so a stuck close never
 * outlives the orchestrator's grace period. A second signal while stopping changes nothing.
 */
function stopOnSignals(app: INestApplicationContext, config: HookbaseConfig, logger: Logger): void {
  const coordinator = app.get(ShutdownCoordinator, { strict: false });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: already stopping`);
      return;
    }
    stopping = true;
    const deadline = coordinator.begin();
    logger.log(`${signal}: stopping (draining for at most ${config.shutdown.drainMs} ms)`);
    const cutShort = setTimeout(
      () => {
        logger.error(
          `not stopped within ${config.shutdown.drainMs + CLOSE_MARGIN_MS} ms of ${signal}: exiting`,
        );
        process.exit(1);
      },
      deadline - Date.now() + CLOSE_MARGIN_MS,
    );
    cutShort.unref();
    app.close().then(
      () => {
        logger.log('stopped');
        process.exit(0);
      },
      (error: Error) => {
        logger.error(`stop failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
