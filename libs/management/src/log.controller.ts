import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { dlqQuerySchema, DomainError, messageQuerySchema, parseInput } from '@hookbase/domain';
import { DlqRepository, EventRepository, MessageRepository } from '@hookbase/persistence';
import { ApiKeyGuard, OrganizationId } from '@hookbase/web';
import { attemptView, dlqEntryView, eventView, messageView } from './views';

/** The message log, events with their messages, and the DLQ: what operators read. */
@Controller('api/organizations/:orgId')
@UseGuards(ApiKeyGuard)
export class LogController {
  constructor(
    private readonly messages: MessageRepository,
    private readonly events: EventRepository,
    private readonly dlq: DlqRepository,
  ) {}

  @Get('messages')
  async listMessages(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor, ...filter } = parseInput(messageQuerySchema, query);
    const page = await this.messages.list(organizationId, filter, { limit, cursor });
    return { data: page.items.map(messageView), nextCursor: page.nextCursor };
  }

  @Get('messages/:messageId')
  async getMessage(
    @OrganizationId() organizationId: string,
    @Param('messageId') messageId: string,
  ) {
    const message = await this.messages.find(organizationId, messageId);
    if (!message) throw new DomainError('MESSAGE_NOT_FOUND', 'Message not found');
    const attempts = await this.messages.attemptsOf(message.id);
    return { data: { ...messageView(message), attemptHistory: attempts.map(attemptView) } };
  }

  /** An event appears here once the fan-out has recorded it, a moment after it was accepted. */
  @Get('events/:eventId')
  async getEvent(@OrganizationId() organizationId: string, @Param('eventId') eventId: string) {
    const event = await this.events.findEvent(organizationId, eventId);
    if (!event) throw new DomainError('EVENT_NOT_FOUND', 'Event not found');
    return { data: eventView(event, await this.events.messagesOfEvent(event.id)) };
  }

  @Get('dlq')
  async listDlq(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor, ...filter } = parseInput(dlqQuerySchema, query);
    const page = await this.dlq.list(organizationId, filter, { limit, cursor });
    return { data: page.items.map(dlqEntryView), nextCursor: page.nextCursor };
  }
}
