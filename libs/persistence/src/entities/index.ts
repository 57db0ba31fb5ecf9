import { ApiKeyEntity } from './api-key.entity';
import { ApplicationEntity } from './application.entity';
import { AttemptEntity } from './attempt.entity';
import { DlqEntryEntity } from './dlq-entry.entity';
import { EndpointSecretEntity } from './endpoint-secret.entity';
import { EndpointEntity } from './endpoint.entity';
import { EventEntity } from './event.entity';
import { EventTypeEntity } from './event-type.entity';
import { IdempotencyKeyEntity } from './idempotency-key.entity';
import { InvalidEventEntity } from './invalid-event.entity';
import { MessageEntity } from './message.entity';
import { OrganizationEntity } from './organization.entity';
import { PortalTokenEntity } from './portal-token.entity';

export {
  ApiKeyEntity,
  ApplicationEntity,
  AttemptEntity,
  DlqEntryEntity,
  EndpointEntity,
  EndpointSecretEntity,
  EventEntity,
  EventTypeEntity,
  IdempotencyKeyEntity,
  InvalidEventEntity,
  MessageEntity,
  OrganizationEntity,
  PortalTokenEntity,
};

export const ENTITIES = [
  OrganizationEntity,
  ApiKeyEntity,
  ApplicationEntity,
  EndpointEntity,
  EndpointSecretEntity,
  IdempotencyKeyEntity,
  EventEntity,
  MessageEntity,
  AttemptEntity,
  DlqEntryEntity,
  InvalidEventEntity,
  EventTypeEntity,
  PortalTokenEntity,
];
