import { Controller, Delete, Get, Param, Query, UseGuards } from '@nestjs/common';
import {
  dlqQuerySchema,
  DomainError,
  eventQuerySchema,
  messageQuerySchema,
  parseInput,
} from '@hookbase/domain';
import { dataOf, DescribeRoute, pageOf } from '@hookbase/web';
import { DlqRepository, EventRepository, MessageRepository } from '@hookbase/persistence';
import { ApiKeyGuard, ApplicationScope, OrganizationId, PortalRoute } from '@hookbase/web';
import { ApplicationsService } from './applications.service';
import { PortalScopeGuard } from './portal-scope.guard';
import { attemptView, dlqEntryView, eventListItemView, eventView, messageView } from './views';

/** The message log, events with their messages, and the DLQ: what operators read. */
@Controller('api/organizations/:orgId')
@UseGuards(ApiKeyGuard, PortalScopeGuard)
export class LogController {
  constructor(
    private readonly messages: MessageRepository,
    private readonly events: EventRepository,
    private readonly dlq: DlqRepository,
    private readonly applications: ApplicationsService,
  ) {}

  @DescribeRoute({
    operationId: 'listMessages',
    tag: 'Message log',
    summary: 'The message log, with filters (`applicationId`: id or uid).',
    security: 'apiKey',
    query: { name: 'MessageQuery', schema: messageQuerySchema },
    success: { status: 200, description: 'A page of messages', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get('messages')
  @PortalRoute()
  async listMessages(
    @OrganizationId() organizationId: string,
    @ApplicationScope() scope: string | null,
    @Query() query: unknown,
  ) {
    const { limit, cursor, applicationId, ...filter } = parseInput(messageQuerySchema, query);
    const page = await this.messages.list(
      organizationId,
      {
        ...filter,
        applicationId: await this.applications.narrow(organizationId, scope, applicationId),
      },
      { limit, cursor },
    );
    return { data: page.items.map(messageView), nextCursor: page.nextCursor };
  }

  @DescribeRoute({
    operationId: 'getMessage',
    tag: 'Message log',
    summary: 'One message with its attempt history.',
    security: 'apiKey',
    success: { status: 200, description: 'The message', schema: dataOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'MESSAGE_NOT_FOUND'],
    usesStore: true,
  })
  @Get('messages/:messageId')
  @PortalRoute()
  async getMessage(
    @OrganizationId() organizationId: string,
    @Param('messageId') messageId: string,
  ) {
    const message = await this.messages.find(organizationId, messageId);
    if (!message) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    const attempts = await this.messages.attemptsOf(message.id);
    return { data: { ...messageView(message), attemptHistory: attempts.map(attemptView) } };
  }

  /**
   * Events appear once the fan-out has recorded them. List items leave the payload out: a page of
   * up to 250 events stays small whatever they carry; GET one event for its payload.
   */
  @DescribeRoute({
    operationId: 'listEvents',
    tag: 'Message log',
    summary:
      'Events, newest first, without their payloads (GET one event for it), with filters: `applicationId` (id or uid), `eventType`, and an acceptance window (`createdAfter`, `createdBefore`).',
    security: 'apiKey',
    query: { name: 'EventQuery', schema: eventQuerySchema },
    success: { status: 200, description: 'A page of events', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get('events')
  @PortalRoute()
  async listEvents(
    @OrganizationId() organizationId: string,
    @ApplicationScope() scope: string | null,
    @Query() query: unknown,
  ) {
    const { limit, cursor, applicationId, ...filter } = parseInput(eventQuerySchema, query);
    const page = await this.events.list(
      organizationId,
      {
        ...filter,
        applicationId: await this.applications.narrow(organizationId, scope, applicationId),
      },
      { limit, cursor },
    );
    return { data: page.items.map(eventListItemView), nextCursor: page.nextCursor };
  }

  /** An event appears here once the fan-out has recorded it, a moment after it was accepted. */
  @DescribeRoute({
    operationId: 'getEvent',
    tag: 'Message log',
    summary: 'One event with its payload and messages (once the fan-out has recorded it).',
    security: 'apiKey',
    success: { status: 200, description: 'The event', schema: dataOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_NOT_FOUND'],
    usesStore: true,
  })
  @Get('events/:eventId')
  @PortalRoute()
  async getEvent(@OrganizationId() organizationId: string, @Param('eventId') eventId: string) {
    const event = await this.events.findEvent(organizationId, eventId);
    if (!event) throw new DomainError('EVENT_NOT_FOUND', 'Event not found');
    return { data: eventView(event, await this.events.messagesOfEvent(event.id)) };
  }

  /** The event and its messages keep their rows; only the payload goes (see the guide). */
  @DescribeRoute({
    operationId: 'purgeEventPayload',
    tag: 'Message log',
    summary:
      "Erase an event's payload from Hookbase's database: the event and its idempotency key (the records on Kafka's topics keep it until the topics' retention removes them). Its messages and attempts keep their rows and statuses; those still waiting are dead-lettered (payload_purged); replaying it is refused with 409 PAYLOAD_PURGED.",
    security: 'apiKey',
    success: {
      status: 200,
      description: 'Purged',
      schema: dataOf({
        type: 'object',
        required: ['id', 'payloadPurged', 'messagesCancelled'],
        properties: {
          id: { type: 'string' },
          payloadPurged: { const: true },
          messagesCancelled: { type: 'integer', minimum: 0 },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_NOT_FOUND'],
    usesStore: true,
  })
  @Delete('events/:eventId/payload')
  async purgePayload(@OrganizationId() organizationId: string, @Param('eventId') eventId: string) {
    const purged = await this.events.purgePayload(organizationId, eventId);
    if (!purged) throw new DomainError('EVENT_NOT_FOUND', 'Event not found');
    return { data: { id: eventId, payloadPurged: true, messagesCancelled: purged.cancelled } };
  }

  @DescribeRoute({
    operationId: 'listDlq',
    tag: 'DLQ',
    summary: 'Dead-lettered messages, with filters (`applicationId`: id or uid).',
    security: 'apiKey',
    query: { name: 'DlqQuery', schema: dlqQuerySchema },
    success: { status: 200, description: 'A page of DLQ entries', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get('dlq')
  @PortalRoute()
  async listDlq(
    @OrganizationId() organizationId: string,
    @ApplicationScope() scope: string | null,
    @Query() query: unknown,
  ) {
    const { limit, cursor, applicationId, ...filter } = parseInput(dlqQuerySchema, query);
    const page = await this.dlq.list(
      organizationId,
      {
        ...filter,
        applicationId: await this.applications.narrow(organizationId, scope, applicationId),
      },
      { limit, cursor },
    );
    return { data: page.items.map(dlqEntryView), nextCursor: page.nextCursor };
  }
}
