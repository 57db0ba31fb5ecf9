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
  applicationQuerySchema,
  createApplicationSchema,
  parseInput,
  updateApplicationSchema,
} from '@hookbase/domain';
import { AuthService } from '@hookbase/auth';
import { ApplicationRepository } from '@hookbase/persistence';
import {
  ApiKeyGuard,
  applicationBody,
  dataOf,
  DescribeRoute,
  OrganizationId,
  pageOf,
} from '@hookbase/web';
import { ApplicationsService } from './applications.service';
import { applicationView } from './views';

/**
 * Applications: an organization's endpoints grouped by the producer's own customer. Every
 * `:appId` takes the application's id or its uid.
 */
@Controller('api/organizations/:orgId/applications')
@UseGuards(ApiKeyGuard)
export class ApplicationsController {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly service: ApplicationsService,
    private readonly auth: AuthService,
  ) {}

  @DescribeRoute({
    operationId: 'listApplications',
    tag: 'Applications',
    summary: 'List applications, oldest first; `uidPrefix` keeps those whose uid starts with it.',
    security: 'apiKey',
    query: { name: 'ApplicationQuery', schema: applicationQuerySchema },
    success: { status: 200, description: 'A page of applications', schema: pageOf() },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED'],
    usesStore: true,
  })
  @Get()
  async list(@OrganizationId() organizationId: string, @Query() query: unknown) {
    const { limit, cursor, uidPrefix } = parseInput(applicationQuerySchema, query);
    const page = await this.applications.list(organizationId, { uidPrefix }, { limit, cursor });
    return { data: page.items.map(applicationView), nextCursor: page.nextCursor };
  }

  @DescribeRoute({
    operationId: 'createApplication',
    tag: 'Applications',
    summary:
      "Create an application: a producer's customer whose endpoints receive only events published for it. `uid` is the producer's own id for it (unique in the organization, never starting with `app_`).",
    security: 'apiKey',
    body: { name: 'CreateApplication', schema: createApplicationSchema, required: true },
    success: { status: 201, description: 'The application', schema: dataOf(applicationBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'APPLICATION_UID_TAKEN'],
    usesStore: true,
  })
  @Post()
  @HttpCode(201)
  async create(@OrganizationId() organizationId: string, @Body() body: unknown) {
    const input = parseInput(createApplicationSchema, body);
    return { data: applicationView(await this.service.create(organizationId, input)) };
  }

  @DescribeRoute({
    operationId: 'getApplication',
    tag: 'Applications',
    summary: 'One application, by id or uid.',
    security: 'apiKey',
    success: { status: 200, description: 'The application', schema: dataOf(applicationBody) },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Get(':appId')
  async get(@OrganizationId() organizationId: string, @Param('appId') appId: string) {
    return { data: applicationView(await this.service.require(organizationId, appId)) };
  }

  @DescribeRoute({
    operationId: 'updateApplication',
    tag: 'Applications',
    summary: "Change an application's name, uid (null clears it) or metadata.",
    security: 'apiKey',
    body: { name: 'UpdateApplication', schema: updateApplicationSchema, required: true },
    success: { status: 200, description: 'The application', schema: dataOf(applicationBody) },
    errors: [
      'ORGANIZATION_NOT_FOUND',
      'APPLICATION_NOT_FOUND',
      'VALIDATION_FAILED',
      'APPLICATION_UID_TAKEN',
    ],
    usesStore: true,
  })
  @Patch(':appId')
  async update(
    @OrganizationId() organizationId: string,
    @Param('appId') appId: string,
    @Body() body: unknown,
  ) {
    const input = parseInput(updateApplicationSchema, body);
    const application = await this.service.require(organizationId, appId);
    return { data: applicationView(await this.service.update(application, input)) };
  }

  @DescribeRoute({
    operationId: 'deleteApplication',
    tag: 'Applications',
    summary:
      'Delete an application and its endpoints; their queued messages are dead-lettered (endpoint_deleted) when next seen.',
    security: 'apiKey',
    success: {
      status: 200,
      description: 'Deleted',
      schema: dataOf({
        type: 'object',
        required: ['id', 'deleted', 'endpointsDeleted'],
        properties: {
          id: { type: 'string' },
          deleted: { const: true },
          endpointsDeleted: { type: 'integer', minimum: 0 },
        },
      }),
    },
    errors: ['ORGANIZATION_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    usesStore: true,
  })
  @Delete(':appId')
  async remove(@OrganizationId() organizationId: string, @Param('appId') appId: string) {
    const application = await this.service.require(organizationId, appId);
    const { endpointsDeleted } = await this.service.delete(application);
    // Its portal tokens went with it (the store cascades); this process forgets them at once.
    this.auth.forgetPortalAccess(application.id);
    return { data: { id: application.id, deleted: true, endpointsDeleted } };
  }
}
