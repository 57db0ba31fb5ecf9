import { Provider } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DestinationAdapters, DestinationRegistry } from '@hookbase/destinations';

/** The dispatcher's destinations: one adapter per kind and the credentials opener. */
export const DESTINATION_REGISTRY = Symbol('DESTINATION_REGISTRY');

/** The registry as its owner holds it: it also lets the adapters' connections go at shutdown. */
export type DispatcherDestinations = DestinationRegistry & { close(): Promise<Error[]> };

export const destinationRegistryProvider: Provider = {
  provide: DESTINATION_REGISTRY,
  inject: [HOOKBASE_CONFIG],
  useFactory: (config: HookbaseConfig): DispatcherDestinations =>
    new DestinationAdapters({
      http: {
        timeoutMs: config.delivery.timeoutMs,
        connectTimeoutMs: config.delivery.connectTimeoutMs,
        allowPrivateTargets: config.delivery.allowPrivateTargets,
        responseExcerptBytes: config.delivery.responseExcerptBytes,
        egressProxy: config.delivery.egressProxy,
        connectionsPerOrigin: config.delivery.dispatchConcurrency,
        userAgent: 'Hookbase/0.1 (+https://github.com/hookbase/hookbase)',
      },
      cloud: {
        timeoutMs: config.delivery.timeoutMs,
        connectTimeoutMs: config.delivery.connectTimeoutMs,
        allowPrivateTargets: config.delivery.allowPrivateTargets,
        egressProxy: config.delivery.egressProxy,
      },
      credentials: config.credentials,
    }),
};
