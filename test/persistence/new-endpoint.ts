import { NewEndpoint } from '@hookbase/persistence';

/** An active HTTP endpoint of `organizationId` as the repository creates it, with `overrides`. */
export function newEndpoint(
  organizationId: string,
  overrides: Partial<NewEndpoint> = {},
): NewEndpoint {
  return {
    organizationId,
    applicationId: null,
    kind: 'http',
    url: 'https://receiver.example/hook',
    description: null,
    config: {},
    eventTypes: [],
    channels: [],
    filter: null,
    status: 'active',
    fifoEnabled: false,
    retry: { delaysMs: [0, 1000], maxAgeMs: 60_000 },
    rateLimitPerSecond: null,
    deliveryOptions: null,
    consecutiveFailures: 0,
    failingSince: null,
    lastSuccessAt: null,
    disabledReason: null,
    disabledAt: null,
    operational: false,
    ...overrides,
  };
}
