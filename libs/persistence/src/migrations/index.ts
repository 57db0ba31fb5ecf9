import { InitialSchema1764460800000 } from './1764460800000-initial-schema';
import { MessageReplays1764547200000 } from './1764547200000-message-replays';
import { InvalidEvents1764633600000 } from './1764633600000-invalid-events';
import { FifoLanes1764720000000 } from './1764720000000-fifo-lanes';
import { PollLog1764806400000 } from './1764806400000-poll-log';
import { OrganizationHostIdentity1764892800000 } from './1764892800000-organization-host-identity';
import { ApiKeyLifecycle1764979200000 } from './1764979200000-api-key-lifecycle';
import { SealEndpointSecrets1765152000000 } from './1765152000000-seal-endpoint-secrets';
import { ExplicitDeliveryState1765238400000 } from './1765238400000-explicit-delivery-state';
import { EventTraceParent1765324800000 } from './1765324800000-event-trace-parent';
import { EndpointDeliveryOptions1765411200000 } from './1765411200000-endpoint-delivery-options';
import { EndpointHealth1765411200001 } from './1765411200001-endpoint-health';
import { OperationalEndpoints1765411200002 } from './1765411200002-operational-endpoints';
import { EventTypes1765497600000 } from './1765497600000-event-types';
import { EndpointChannelsAndFilter1765497600001 } from './1765497600001-endpoint-channels-and-filter';
import { Applications1765584000000 } from './1765584000000-applications';
import { PortalTokens1765584000001 } from './1765584000001-portal-tokens';
import { PortalBranding1765584000002 } from './1765584000002-portal-branding';
import { ApplicationRetention1765584000003 } from './1765584000003-application-retention';
import { PayloadPurge1765584000004 } from './1765584000004-payload-purge';
import { EventsByApplication1765670400000 } from './1765670400000-events-by-application';
import { FifoBlockedEpisodes1765756800000 } from './1765756800000-fifo-blocked-episodes';
import { OperationalOutbox1765756800001 } from './1765756800001-operational-outbox';
import { EndpointConfigVersion1765843200000 } from './1765843200000-endpoint-config-version';
import { EndpointRoutingHistory1765929600000 } from './1765929600000-endpoint-routing-history';
import { EventPayloadAsPublished1766016000000 } from './1766016000000-event-payload-as-published';

export const MIGRATIONS = [
  InitialSchema1764460800000,
  MessageReplays1764547200000,
  InvalidEvents1764633600000,
  FifoLanes1764720000000,
  PollLog1764806400000,
  OrganizationHostIdentity1764892800000,
  ApiKeyLifecycle1764979200000,
  SealEndpointSecrets1765152000000,
  ExplicitDeliveryState1765238400000,
  EventTraceParent1765324800000,
  EndpointDeliveryOptions1765411200000,
  EndpointHealth1765411200001,
  OperationalEndpoints1765411200002,
  EventTypes1765497600000,
  EndpointChannelsAndFilter1765497600001,
  Applications1765584000000,
  PortalTokens1765584000001,
  PortalBranding1765584000002,
  ApplicationRetention1765584000003,
  PayloadPurge1765584000004,
  EventsByApplication1765670400000,
  FifoBlockedEpisodes1765756800000,
  OperationalOutbox1765756800001,
  EndpointConfigVersion1765843200000,
  EndpointRoutingHistory1765929600000,
  EventPayloadAsPublished1766016000000,
];
