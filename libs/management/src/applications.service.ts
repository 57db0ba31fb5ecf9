import { Inject, Injectable } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  CreateApplicationInput,
  DomainError,
  retentionProblem,
  UpdateApplicationInput,
} from '@hookbase/domain';
import {
  ApplicationEntity,
  ApplicationRepository,
  EndpointRepository,
  OrganizationRepository,
  PollLogRepository,
} from '@hookbase/persistence';
import { EndpointSettingsService } from './endpoint-settings.service';

/** Create, change and delete applications; a deleted application takes its endpoints with it. */
@Injectable()
export class ApplicationsService {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly endpoints: EndpointRepository,
    private readonly settings: EndpointSettingsService,
    private readonly pollLog: PollLogRepository,
    private readonly organizations: OrganizationRepository,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  /** An application keeps its log for at most its plan's retention (400 otherwise). */
  private async checkRetention(organizationId: string, days: number | null): Promise<void> {
    if (days === null) return;
    const organization = await this.organizations.findById(organizationId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    const problem = retentionProblem(days, this.config.retention.days[organization.plan]);
    if (problem) {
      throw new DomainError('VALIDATION_FAILED', `Invalid request: retentionDays: ${problem}`, {
        issues: [{ path: 'retentionDays', message: problem }],
      });
    }
  }

  /** The application a reference (id or uid) names in the organization, else 404. */
  async require(organizationId: string, reference: string): Promise<ApplicationEntity> {
    const application = await this.applications.find(organizationId, reference);
    if (!application) throw new DomainError('APPLICATION_NOT_FOUND', 'Application not found');
    return application;
  }

  /**
   * The application a request is narrowed to, by id: a portal token's own (naming another is
   * not found), else the one a filter or field names (id or uid), else none.
   */
  async narrow(
    organizationId: string,
    scope: string | null,
    reference: string | undefined,
  ): Promise<string | undefined> {
    if (scope === null) {
      return reference === undefined
        ? undefined
        : (await this.require(organizationId, reference)).id;
    }
    if (reference !== undefined && (await this.require(organizationId, reference)).id !== scope)
      throw new DomainError('APPLICATION_NOT_FOUND', 'Application not found');
    return scope;
  }

  async create(organizationId: string, input: CreateApplicationInput): Promise<ApplicationEntity> {
    await this.checkRetention(organizationId, input.retentionDays ?? null);
    return this.applications.create({
      organizationId,
      uid: input.uid ?? null,
      name: input.name,
      metadata: input.metadata ?? {},
      retentionDays: input.retentionDays ?? null,
    });
  }

  async update(
    application: ApplicationEntity,
    input: UpdateApplicationInput,
  ): Promise<ApplicationEntity> {
    if (input.retentionDays !== undefined) {
      await this.checkRetention(application.organizationId, input.retentionDays);
      application.retentionDays = input.retentionDays;
    }
    if (input.name !== undefined) application.name = input.name;
    if (input.uid !== undefined) application.uid = input.uid;
    if (input.metadata !== undefined) application.metadata = input.metadata;
    return this.applications.save(application);
  }

  /**
   * Deletes each endpoint of the application as an endpoint delete does (queued messages
   * dead-lettered as endpoint_deleted when next seen, a polling log's unfetched ones at once,
   * secrets and credentials cleared), then the application. Endpoints first: a crash in between
   * leaves the application, and deleting it again finishes the job.
   */
  async delete(application: ApplicationEntity): Promise<{ endpointsDeleted: number }> {
    const endpoints = await this.endpoints.liveOfApplication(
      application.organizationId,
      application.id,
    );
    for (const endpoint of endpoints) {
      await this.settings.delete(endpoint);
      if (endpoint.kind === 'polling') await this.pollLog.cancelUnpolled(endpoint.id);
    }
    await this.applications.delete(application);
    return { endpointsDeleted: endpoints.length };
  }
}
