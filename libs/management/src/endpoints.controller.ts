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
  createEndpointSchema,
  DomainError,
  listQuerySchema,
  parseInput,
  rotateSecretSchema,
  updateEndpointSchema,
} from '@hookbase/domain';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { EndpointRepository, FifoLaneRepository, PollLogRepository } from '@hookbase/persistence';
import { ApiKeyGuard, OrganizationId } from '@hookbase/web';
import { EndpointSettingsService } from './endpoint-settings.service';
import { endpointView, fifoStateView } from './views';

@Controller('api/organizations/:orgId/webhook-endpoints')
@UseGuards(ApiKeyGuard)
export class EndpointsController {
  constructor(
    private readonly endpoints: EndpointRepository,
    private readonly settings: EndpointSettingsService,
    private readonly lanes: FifoLaneRepository,
    private readonly pollLog: PollLogRepository,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  @Get()
  async list(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor } = parseInput(listQuerySchema, query);
    const page = await this.endpoints.list(organizationId, { limit, cursor });
    return { data: page.items.map(endpointView), nextCursor: page.nextCursor };
  }

  @Post()
  @HttpCode(201)
  async create(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const input = parseInput(createEndpointSchema, body);
    return { data: endpointView(await this.settings.create(organizationId, input)) };
  }

  @Get(':endpointId')
  async get(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    return { data: endpointView(await this.require(organizationId, endpointId)) };
  }

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

  /** The endpoint's FIFO queue: depth, lag, and whether (and why) its head is blocked. */
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
   * Queued messages are dead-lettered (endpoint_deleted) when the dispatcher next sees them; a
   * polling endpoint's unfetched ones at once (the dispatcher never sees them).
   */
  @Delete(':endpointId')
  async remove(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    await this.settings.delete(endpoint);
    if (endpoint.kind === 'polling') await this.pollLog.cancelUnpolled(endpoint.id);
    return { data: { id: endpoint.id, deleted: true } };
  }

  @Get(':endpointId/secret')
  async secret(@OrganizationId() organizationId: string, @Param('endpointId') endpointId: string) {
    const endpoint = await this.require(organizationId, endpointId);
    const key = await this.endpoints.currentSecret(endpoint.id);
    if (!key) throw new DomainError('NOT_FOUND', 'This endpoint has no signing secret');
    return { data: { key } };
  }

  /** 200, not Nest's 201 for a POST: the endpoint is changed, nothing is created at a new URL. */
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

  private async require(organizationId: string, endpointId: string) {
    const endpoint = await this.endpoints.findLive(organizationId, endpointId);
    if (!endpoint) throw new DomainError('ENDPOINT_NOT_FOUND', 'Endpoint not found');
    return endpoint;
  }
}
