import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  compileFilter,
  createEndpointSchema,
  DomainError,
  endpointReceives,
  eventTypeMatches,
  filterTestSchema,
  endpointQuerySchema,
  parseInput,
  rotateSecretSchema,
  testSendSchema,
  updateEndpointSchema,
} from '@hookbase/domain';
import {
  createEndpointBody,
  dataOf,
  DescribeRoute,
  endpointBody,
  endpointStatsBody,
  fifoStateBody,
  pageOf,
  secretKeyBody,
  testSendBody,
  updateEndpointBody,
} from '@hookbase/web';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { EndpointRepository, FifoLaneRepository, PollLogRepository } from '@hookbase/persistence';
import { ApiKeyGuard, ApplicationScope, OrganizationId, PortalRoute } from '@hookbase/web';
import { ApplicationsService } from './applications.service';
import { DeliveryStatsService } from './delivery-stats.service';
import { EndpointSettingsService } from './endpoint-settings.service';
import { EndpointTestSendService } from './endpoint-test-send.service';
import { PortalScopeGuard } from './portal-scope.guard';
import { endpointView, fifoStateView } from './views';

/** Every route here is application-scoped: a portal token manages its application's endpoints. */
@Controller('api/organizations/:orgId/webhook-endpoints')
@UseGuards(ApiKeyGuard, PortalScopeGuard)
@PortalRoute()
export class EndpointsController {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly settings: EndpointSettingsService,
    private readonly testSends: EndpointTestSendService,
    private readonly lanes: FifoLaneRepository,
    private readonly pollLog: PollLogRepository,
    private readonly deliveryStats: DeliveryStatsService,
    private readonly applications: ApplicationsService,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  @DescribeRoute({
    operationId: 'listEndpoints',
    tag: 'Endpoints',
    summary:
      'List endpoints, oldest first; `applicationId` (id or uid) keeps those of one application.',
    security: 'apiKey',
    query: { name: 'EndpointQuery', schema: endpointQuerySchema },
    success: { status: 200, description: 'A page of endpoints', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get()
  async list(
    @OrganizationId() organizationId: string,
    @ApplicationScope() scope: string | null,
    @Query() query: unknown,
  ) {
    const { limit, cursor, applicationId } = parseInput(endpointQuerySchema, query);
    const page = await this.endpoints.list(organizationId, {
      limit,
      cursor,
      applicationId: await this.applications.narrow(organizationId, scope, applicationId),
    });
    return { data: page.items.map(endpointView), nextCursor: page.nextCursor };
  }

  /** The document shows createEndpointSchema and each cloud kind's config schema at once. */
  @DescribeRoute({
    operationId: 'createEndpoint',
    tag: 'Endpoints',
    summary:
      'Create an endpoint: `http`, a cloud kind (`sqs`, `sns`, `eventbridge`, `pubsub`, `s3`; `config` per kind) or `polling`. With `applicationId` (id or uid) it belongs to that application for good.',
    security: 'apiKey',
    body: { name: 'CreateEndpoint', schema: createEndpointBody, required: true },
    success: { status: 201, description: 'The endpoint', schema: dataOf(endpointBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'INVALID_URL',
      'URL_NOT_ALLOWED',
      'INVALID_SECRET',
      'FIFO_NOT_SUPPORTED',
      'FEATURE_NOT_AVAILABLE',
      'CREDENTIALS_REQUIRED',
      'PLAN_REQUIRED',
      'ENDPOINT_LIMIT_REACHED',
      'FILTER_INVALID',
      'APPLICATION_NOT_FOUND',
    ],
    usesStore: true,
  })
  @Post()
  @HttpCode(201)
  async create(
    @OrganizationId() organizationId: string,
    @ApplicationScope() scope: string | null,
    @Body() body: unknown,
  ) {
    const input = parseInput(createEndpointSchema, body);
    const applicationId = await this.applications.narrow(
      organizationId,
      scope,
      input.applicationId,
    );
    return {
      data: endpointView(
        await this.settings.create(organizationId, input, { applicationId: applicationId ?? null }),
      ),
    };
  }

  @DescribeRoute({
    operationId: 'getEndpoint',
    tag: 'Endpoints',
    summary: 'One endpoint.',
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
    operationId: 'updateEndpoint',
    tag: 'Endpoints',
    summary: 'Change an endpoint.',
    security: 'apiKey',
    body: { name: 'UpdateEndpoint', schema: updateEndpointBody, required: true },
    success: { status: 200, description: 'The endpoint', schema: dataOf(endpointBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'ENDPOINT_NOT_FOUND',
      'INVALID_URL',
      'URL_NOT_ALLOWED',
      'FIFO_NOT_SUPPORTED',
      'FEATURE_NOT_AVAILABLE',
      'CREDENTIALS_REQUIRED',
      'CREDENTIALS_TARGET_CHANGED',
      'PLAN_REQUIRED',
      'FILTER_INVALID',
    ],
    usesStore: true,
  })
  @Patch(':endpointId')
  async update(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const input = parseInput(updateEndpointSchema, body);
    const endpoint = await this.require(organizationId, endpointId);
    return { data: endpointView(await this.settings.update(endpoint, input)) };
  }

  /**
   * Whether an event like this one would reach the endpoint now: its type against the endpoint's
   * subscriptions, its channels against the endpoint's, and the endpoint's filter.
   */
  @DescribeRoute({
    operationId: 'testEndpointFilter',
    tag: 'Endpoints',
    summary:
      "Try the endpoint's routing on an event: whether its type, channels and filter would let it through (status and `endpointIds` aside).",
    security: 'apiKey',
    body: { name: 'FilterTest', schema: filterTestSchema, required: true },
    success: {
      status: 200,
      description: 'Whether it matches, and each part of the rule',
      schema: dataOf({
        type: 'object',
        required: ['matches', 'eventType', 'channels', 'filter'],
        properties: {
          matches: { type: 'boolean' },
          eventType: { type: 'boolean' },
          channels: { type: 'boolean' },
          filter: { type: 'boolean' },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Post(':endpointId/filter/test')
  @HttpCode(200)
  async testFilter(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const input = parseInput(filterTestSchema, body);
    const endpoint = await this.require(organizationId, endpointId);
    const event = {
      eventType: input.eventType,
      channels: input.channels ?? [],
      payload: input.payload,
    };
    const filter = endpoint.filter ? compileFilter(endpoint.filter) : null;
    const none = { eventTypes: [], channels: [], filter: null };
    return {
      data: {
        matches: endpointReceives(
          { eventTypes: endpoint.eventTypes, channels: endpoint.channels, filter },
          event,
        ),
        eventType:
          endpoint.eventTypes.length === 0 ||
          endpoint.eventTypes.some((s) => eventTypeMatches(s, input.eventType)),
        channels: endpointReceives({ ...none, channels: endpoint.channels }, event),
        filter: endpointReceives({ ...none, filter }, event),
      },
    };
  }

  /** The endpoint's FIFO queue: depth, lag, and whether (and why) its head is blocked. */
  @DescribeRoute({
    operationId: 'getEndpointFifoState',
    tag: 'Endpoints',
    summary:
      "The endpoint's FIFO queue: depth, lag, its head, and whether (and why) it is blocked.",
    security: 'apiKey',
    success: { status: 200, description: 'The FIFO state', schema: dataOf(fifoStateBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':endpointId/fifo-state')
  async fifoState(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
  ) {
    const endpoint = await this.require(organizationId, endpointId);
    const lane = await this.lanes.snapshot(endpoint.id);
    return { data: fifoStateView(endpoint, lane, this.config.fifo.leaseMs, new Date()) };
  }

  /**
   * The last hour of the endpoint's attempts per minute (succeeded, failed, median and longest
   * latency), its success rate, and its latest attempts: what the dashboard charts.
   */
  @DescribeRoute({
    operationId: 'getEndpointStats',
    tag: 'Endpoints',
    summary:
      "The endpoint's last hour: attempts per minute by outcome with their median and longest latency, the success rate, and the 20 latest attempts.",
    security: 'apiKey',
    success: { status: 200, description: 'The statistics', schema: dataOf(endpointStatsBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':endpointId/stats')
  async stats(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    return { data: await this.deliveryStats.lastHour([endpoint.id]) };
  }

  /**
   * Queued messages are dead-lettered (endpoint_deleted) when the dispatcher next sees them; a
   * polling endpoint's unfetched ones at once (the dispatcher never sees them).
   */
  @DescribeRoute({
    operationId: 'deleteEndpoint',
    tag: 'Endpoints',
    summary:
      'Delete an endpoint; its queued messages are dead-lettered (endpoint_deleted) when next seen.',
    security: 'apiKey',
    success: {
      status: 200,
      description: 'Deleted',
      schema: dataOf({
        type: 'object',
        required: ['id', 'deleted'],
        properties: { id: { type: 'string' }, deleted: { const: true } },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND'],
    usesStore: true,
  })
  @Delete(':endpointId')
  async remove(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    await this.settings.delete(endpoint);
    if (endpoint.kind === 'polling') await this.pollLog.cancelUnpolled(endpoint.id);
    return { data: { id: endpoint.id, deleted: true } };
  }

  @DescribeRoute({
    operationId: 'getEndpointSecret',
    tag: 'Endpoints',
    summary: "The endpoint's current signing secret.",
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

  /** 200, not Nest's 201 for a POST: the endpoint is changed, nothing is created at a new URL. */
  @DescribeRoute({
    operationId: 'rotateEndpointSecret',
    tag: 'Endpoints',
    summary: 'A new signing secret; older ones keep signing until the overlap ends.',
    security: 'apiKey',
    body: { name: 'RotateSecret', schema: rotateSecretSchema, required: false },
    success: { status: 200, description: 'The new secret', schema: secretKeyBody },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'NOT_FOUND'],
    usesStore: true,
  })
  @Post(':endpointId/secret/rotate')
  @HttpCode(200)
  async rotate(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const { overlapSeconds } = parseInput(rotateSecretSchema, body ?? {});
    const endpoint = await this.require(organizationId, endpointId);
    if (endpoint.kind !== 'http')
      throw new DomainError('NOT_FOUND', 'Only http endpoints have secrets');
    return { data: { key: await this.settings.rotateSecret(endpoint, overlapSeconds) } };
  }

  /** 200: the answer is the attempt, made now; nothing is queued or recorded. */
  @DescribeRoute({
    operationId: 'testEndpoint',
    tag: 'Endpoints',
    summary:
      'Send one signed example message to an http endpoint now, outside every queue (never through its FIFO lane, not recorded in the log), and answer with the attempt.',
    security: 'apiKey',
    body: { name: 'TestSend', schema: testSendSchema, required: false },
    success: { status: 200, description: 'The attempt', schema: dataOf(testSendBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'ENDPOINT_NOT_FOUND', 'FEATURE_NOT_AVAILABLE'],
    usesStore: true,
  })
  @Post(':endpointId/test')
  @HttpCode(200)
  async test(
    @OrganizationId() organizationId: string,
    @Param('endpointId') endpointId: string,
    @Body() body: unknown,
  ) {
    const input = parseInput(testSendSchema, body ?? {});
    const endpoint = await this.require(organizationId, endpointId);
    return { data: await this.testSends.send(endpoint, input) };
  }

  private async require(organizationId: string, endpointId: string) {
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    // Operational endpoints are managed under their own route.
    if (!endpoint || endpoint.operational) {
      throw new DomainError('ENDPOINT_NOT_FOUND', 'Endpoint not found');
    }
    return endpoint;
  }
}
