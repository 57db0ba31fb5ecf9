import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { z } from 'zod';
import {
  canonicalJson,
  checkEventTypeDefinition,
  createEventTypeSchema,
  DomainError,
  eventTypePolicySchema,
  isEventTypeName,
  listQuerySchema,
  parseInput,
  readOpenApiWebhooks,
  updateEventTypeSchema,
} from '@hookbase/domain';
import {
  anyObject,
  ApiKeyGuard,
  dataOf,
  DescribeRoute,
  OrganizationId,
  pageOf,
  PortalRoute,
} from '@hookbase/web';
import {
  EventTypeCatalog,
  EventTypeEntity,
  EventTypeRepository,
  OrganizationRepository,
} from '@hookbase/persistence';
import { eventTypeView, organizationView } from './views';

/** An OpenAPI 3.1 document, read by readOpenApiWebhooks (which says what it cannot use). */
const openApiDocumentSchema = z.record(z.string(), z.unknown());

const eventTypeBody = {
  type: 'object',
  required: ['name', 'description', 'schema', 'example', 'deprecated', 'archived', 'version'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    schema: {},
    example: { type: ['object', 'null'] },
    deprecated: { type: 'boolean' },
    archived: { type: 'boolean' },
    version: { type: 'integer' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
};

/**
 * The organization's event type catalog (ADR 0031) and its policy. A change is seen at once by the
 * process that made it and by every other within HOOKBASE_EVENT_TYPE_CACHE_MS.
 */
@Controller('api/organizations/:orgId')
@UseGuards(ApiKeyGuard)
export class EventTypesController {
  constructor(
    private readonly eventTypes: EventTypeRepository,
    private readonly organizations: OrganizationRepository,
    private readonly catalog: EventTypeCatalog,
  ) {}

  @DescribeRoute({
    operationId: 'listEventTypes',
    tag: 'Event types',
    summary: "The organization's event types, by name.",
    security: 'apiKey',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: { status: 200, description: 'A page of event types', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  })
  // The catalog is the organization's, read by its applications' portals too (read only).
  @PortalRoute()
  @Get('event-types')
  async list(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor } = parseInput(listQuerySchema, query);
    const page = await this.eventTypes.list(organizationId, { limit, cursor });
    return { data: page.items.map(eventTypeView), nextCursor: page.nextCursor };
  }

  @DescribeRoute({
    operationId: 'createEventType',
    tag: 'Event types',
    summary:
      'Declare an event type, with an optional JSON Schema (2020-12) and an example, which must match the schema.',
    security: 'apiKey',
    body: { name: 'CreateEventType', schema: createEventTypeSchema, required: true },
    success: { status: 201, description: 'The event type', schema: dataOf(eventTypeBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_TYPE_EXISTS', 'SCHEMA_INVALID', 'EXAMPLE_INVALID'],
    usesStore: true,
  })
  @Post('event-types')
  @HttpCode(201)
  async create(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const { name, ...fields } = parseInput(createEventTypeSchema, body);
    checkEventTypeDefinition({ schema: fields.schema, example: fields.example });
    const created = await this.eventTypes.create(organizationId, name, fields);
    if (!created) {
      throw new DomainError('EVENT_TYPE_EXISTS', `Event type ${name} already exists`, { name });
    }
    this.catalog.forget(organizationId);
    return { data: eventTypeView(created) };
  }

  @DescribeRoute({
    operationId: 'importEventTypes',
    tag: 'Event types',
    summary:
      "Create or update one event type per entry of an OpenAPI 3.1 document's `webhooks` (schema from the JSON request body, example, description, deprecated). Idempotent; answers what changed.",
    security: 'apiKey',
    body: { name: 'OpenApiDocument', schema: openApiDocumentSchema, required: true },
    success: {
      status: 200,
      description: 'The names created, updated and unchanged',
      schema: dataOf({
        type: 'object',
        required: ['created', 'updated', 'unchanged'],
        properties: {
          created: { type: 'array', items: { type: 'string' } },
          updated: { type: 'array', items: { type: 'string' } },
          unchanged: { type: 'array', items: { type: 'string' } },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'SCHEMA_INVALID', 'EXAMPLE_INVALID'],
    usesStore: true,
  })
  @Post('event-types/import')
  @HttpCode(200)
  async import(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const document = parseInput(openApiDocumentSchema, body);
    const { types, problems } = readOpenApiWebhooks(document);
    if (problems.length > 0) {
      throw new DomainError(
        'VALIDATION_FAILED',
        `The document cannot be imported: ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`,
        { issues: problems.map((p) => ({ path: p.pointer, message: p.message })) },
      );
    }
    // Every definition is checked before anything is written.
    for (const type of types) {
      try {
        checkEventTypeDefinition(type);
      } catch (error) {
        if (error instanceof DomainError) {
          throw new DomainError(error.code, `${type.name}: ${error.message}`, {
            name: type.name,
            ...(error.details as object),
          });
        }
        throw error;
      }
    }
    const report = { created: [] as string[], updated: [] as string[], unchanged: [] as string[] };
    for (const { name, ...fields } of types) {
      const existing = await this.eventTypes.find(organizationId, name);
      if (!existing) {
        if (await this.eventTypes.create(organizationId, name, fields)) report.created.push(name);
        else report.unchanged.push(name);
      } else if (sameDefinition(existing, fields)) {
        report.unchanged.push(name);
      } else {
        await this.eventTypes.update(existing, fields);
        report.updated.push(name);
      }
    }
    this.catalog.forget(organizationId);
    return { data: report };
  }

  @DescribeRoute({
    operationId: 'getEventType',
    tag: 'Event types',
    summary: 'One event type, with its schema and example.',
    security: 'apiKey',
    success: { status: 200, description: 'The event type', schema: dataOf(eventTypeBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_TYPE_NOT_FOUND'],
    usesStore: true,
  })
  @PortalRoute()
  @Get('event-types/:name')
  async get(@OrganizationId() organizationId: string, @Param('name') name: string) {
    return { data: eventTypeView(await this.require(organizationId, name)) };
  }

  @DescribeRoute({
    operationId: 'updateEventType',
    tag: 'Event types',
    summary:
      'Change an event type; the example is checked against the schema as they will be saved. Archiving refuses the type under the `declared` and `validated` policies.',
    security: 'apiKey',
    body: { name: 'UpdateEventType', schema: updateEventTypeSchema, required: true },
    success: { status: 200, description: 'The event type', schema: dataOf(eventTypeBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_TYPE_NOT_FOUND', 'SCHEMA_INVALID', 'EXAMPLE_INVALID'],
    usesStore: true,
  })
  @Patch('event-types/:name')
  async update(
    @OrganizationId() organizationId: string,
    @Param('name') name: string,
    @Body() body: unknown,
  ) {
    const fields = parseInput(updateEventTypeSchema, body);
    const existing = await this.require(organizationId, name);
    checkEventTypeDefinition({
      schema: fields.schema === undefined ? existing.schema : fields.schema,
      example: fields.example === undefined ? existing.example : fields.example,
    });
    const updated = await this.eventTypes.update(existing, fields);
    this.catalog.forget(organizationId);
    return { data: eventTypeView(updated) };
  }

  @DescribeRoute({
    operationId: 'deleteEventType',
    tag: 'Event types',
    summary:
      'Delete an event type from the catalog (archiving keeps it documented and refused instead).',
    security: 'apiKey',
    success: { status: 200, description: 'The deleted event type', schema: dataOf(eventTypeBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'EVENT_TYPE_NOT_FOUND'],
    usesStore: true,
  })
  @Delete('event-types/:name')
  async delete(@OrganizationId() organizationId: string, @Param('name') name: string) {
    const existing = await this.require(organizationId, name);
    await this.eventTypes.delete(organizationId, name);
    this.catalog.forget(organizationId);
    return { data: eventTypeView(existing) };
  }

  @DescribeRoute({
    operationId: 'setEventTypePolicy',
    tag: 'Event types',
    summary:
      'Set what a publish must satisfy: `open` (any type, the default), `declared` (a type of the catalog, not archived; else 400 EVENT_TYPE_UNKNOWN) or `validated` (also the payload matches its schema; else 400 PAYLOAD_INVALID).',
    security: 'apiKey',
    body: { name: 'EventTypePolicy', schema: eventTypePolicySchema, required: true },
    success: { status: 200, description: 'The organization', schema: dataOf(anyObject) },
    errors: ['ORGANIZATION_NOT_FOUND'],
    usesStore: true,
  })
  @Patch('event-type-policy')
  async setPolicy(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const { eventTypePolicy } = parseInput(eventTypePolicySchema, body);
    await this.eventTypes.setPolicy(organizationId, eventTypePolicy);
    this.catalog.forget(organizationId);
    const organization = await this.organizations.findById(organizationId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    return { data: organizationView(organization) };
  }

  private async require(organizationId: string, name: string): Promise<EventTypeEntity> {
    const found = isEventTypeName(name) ? await this.eventTypes.find(organizationId, name) : null;
    if (!found) throw new DomainError('EVENT_TYPE_NOT_FOUND', `Event type ${name} not found`);
    return found;
  }
}

function sameDefinition(
  existing: EventTypeEntity,
  fields: { description: string; schema: unknown; example: unknown; deprecated: boolean },
): boolean {
  return (
    existing.description === fields.description &&
    existing.deprecated === fields.deprecated &&
    canonicalJson(existing.schema ?? null) === canonicalJson(fields.schema ?? null) &&
    canonicalJson(existing.example ?? null) === canonicalJson(fields.example ?? null)
  );
}
