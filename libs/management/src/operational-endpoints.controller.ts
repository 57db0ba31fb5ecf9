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
import {
  createOperationalEndpointSchema,
  DomainError,
  listQuerySchema,
  parseInput,
  updateOperationalEndpointSchema,
} from '@hookbase/domain';
import {
  ApiKeyGuard,
  dataOf,
  DescribeRoute,
  endpointBody,
  OrganizationId,
  pageOf,
  secretKeyBody,
} from '@hookbase/web';
import { EndpointRepository } from '@hookbase/persistence';
import { EndpointSettingsService } from './endpoint-settings.service';
import { endpointView } from './views';

const DELETED = dataOf({
  type: 'object',
  required: ['id', 'deleted'],
  properties: { id: { type: 'string' }, deleted: { const: true } },
});

/**
 * The organization's operational endpoints: http receivers of operational events (endpoint
 * created, disabled, failing, recovered, dead-lettered...), each with its own signing secret and
 * an `eventTypes` filter. Their deliveries go through the pipeline like any other and show in the
 * message log; they never cause operational events themselves.
 */
@Controller('api/organizations/:orgId/operational-webhook-endpoints')
@UseGuards(ApiKeyGuard)
export class OperationalEndpointsController {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly settings: EndpointSettingsService,
  ) {}

  @DescribeRoute({
    operationId: 'listOperationalEndpoints',
    tag: 'Endpoints',
    summary: 'List operational endpoints, oldest first.',
    security: 'apiKey',
    query: { name: 'ListQuery', schema: listQuerySchema },
    success: { status: 200, description: 'A page of operational endpoints', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  })
  @Get()
  async list(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor } = parseInput(listQuerySchema, query);
    const page = await this.endpoints.list(organizationId, { limit, cursor, operational: true });
    return { data: page.items.map(endpointView), nextCursor: page.nextCursor };
  }

  @DescribeRoute({
    operationId: 'createOperationalEndpoint',
    tag: 'Endpoints',
    summary:
      'Register an http endpoint for operational events (signed with Standard Webhooks with its own secret; `eventTypes` empty: every type).',
    security: 'apiKey',
    body: {
      name: 'CreateOperationalEndpoint',
      schema: createOperationalEndpointSchema,
      required: true,
    },
    success: { status: 201, description: 'The endpoint', schema: dataOf(endpointBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'INVALID_URL',
      'URL_NOT_ALLOWED',
      'INVALID_SECRET',
      'ENDPOINT_LIMIT_REACHED',
    ],
    usesStore: true,
  })
  @Post()
  @HttpCode(201)
  async create(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const input = parseInput(createOperationalEndpointSchema, body);
    const endpoint = await this.settings.create(
      organizationId,
      { kind: 'http', ...input },
      { operational: true },
    );
    return { data: endpointView(endpoint) };
  }

  @DescribeRoute({
    operationId: 'getOperationalEndpoint',
    tag: 'Endpoints',
    summary: 'One operational endpoint.',
    security: 'apiKey',
    success: { status: 200, description: 'The endpoint', schema: dataOf(endpointBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':endpointId')
  async get(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    return { data: endpointView(await this.require(organizationId, endpointId)) };
  }

  @DescribeRoute({
    operationId: 'updateOperationalEndpoint',
    tag: 'Endpoints',
    summary: 'Change an operational endpoint.',
    security: 'apiKey',
    body: {
      name: 'UpdateOperationalEndpoint',
      schema: updateOperationalEndpointSchema,
      required: true,
    },
    success: { status: 200, description: 'The endpoint', schema: dataOf(endpointBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'INVALID_URL', 'URL_NOT_ALLOWED'],
    usesStore: true,
  })
  @Patch(':endpointId')
  async update(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const input = parseInput(updateOperationalEndpointSchema, body);
    const endpoint = await this.require(organizationId, endpointId);
    return { data: endpointView(await this.settings.update(endpoint, input)) };
  }

  @DescribeRoute({
    operationId: 'deleteOperationalEndpoint',
    tag: 'Endpoints',
    summary: 'Delete an operational endpoint.',
    security: 'apiKey',
    success: { status: 200, description: 'Deleted', schema: DELETED },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Delete(':endpointId')
  async remove(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    await this.settings.delete(endpoint);
    return { data: { id: endpoint.id, deleted: true } };
  }

  @DescribeRoute({
    operationId: 'getOperationalEndpointSecret',
    tag: 'Endpoints',
    summary: "The operational endpoint's current signing secret.",
    security: 'apiKey',
    success: { status: 200, description: 'The secret', schema: secretKeyBody },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'NOT_FOUND'],
    usesStore: true,
  })
  @Get(':endpointId/secret')
  async secret(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    const key = await this.endpoints.currentSecret(endpoint.id);
    if (!key) throw new DomainError('NOT_FOUND', 'This endpoint has no signing secret');
    return { data: { key } };
  }

  private async require(organizationId: string, endpointId: string) {
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    if (!endpoint || !endpoint.operational) {
      throw new DomainError('ENDPOINT_NOT_FOUND', 'Operational endpoint not found');
    }
    return endpoint;
  }
}
