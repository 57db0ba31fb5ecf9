import { Inject, Injectable, Optional } from '@nestjs/common';
import { OperationalEventPublisher } from '@hookbase/kafka';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  checkFifoSetting,
  checkPollingFields,
  checkTargetUrl,
  compileFilter,
  CreateEndpointInput,
  DEFAULT_RETRY_POLICY,
  DomainError,
  EndpointKind,
  type OperationalEventType,
  UpdateEndpointInput,
  validateRetryPolicy,
} from '@hookbase/domain';
import {
  checkTargetName,
  CLOUD_DESTINATION_KINDS,
  EndpointCredentials,
  hasReceiverOptionInput,
  hasStoredCredentials,
  isCloudDestinationKind,
  publicEndpointConfig,
  ReceiverOptionsSealer,
  type ReceiverOptionsInput,
} from '@hookbase/destinations';
import {
  type AlsoInTransaction,
  EndpointEntity,
  EndpointRepository,
  OrganizationRepository,
} from '@hookbase/persistence';
import { generateSecret, isValidSecret } from '@hookbase/signing';

/** Endpoint kinds this build can deliver to; the others are refused rather than stored unused. */
const AVAILABLE_KINDS: readonly EndpointKind[] = ['http', 'polling', ...CLOUD_DESTINATION_KINDS];
const DNS_CHECK_TIMEOUT_MS = 2_000;

/** Create, change and delete endpoints, with every rule checked before anything is stored. */
@Injectable()
export class EndpointSettingsService {
  private readonly credentials: EndpointCredentials;
  private readonly receiverOptions: ReceiverOptionsSealer;

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly endpoints: EndpointRepository,
    private readonly organizations: OrganizationRepository,
    @Optional() private readonly operational?: OperationalEventPublisher,
  ) {
    this.credentials = new EndpointCredentials(config.credentials);
    this.receiverOptions = new ReceiverOptionsSealer(config.credentials);
  }

  /**
   * Creates an endpoint. `applicationId` is the resolved id of the application it belongs to (null
   * for the organization's own); `operational`, one that receives only operational events.
   */
  async create(
    organizationId: string,
    input: CreateEndpointInput,
    {
      applicationId = null,
      operational = false,
    }: { applicationId?: string | null; operational?: boolean } = {},
  ): Promise<EndpointEntity> {
    if (!AVAILABLE_KINDS.includes(input.kind)) {
      throw new DomainError(
        'FEATURE_NOT_AVAILABLE',
        `Endpoint kind "${input.kind}" is not available yet; available: ${AVAILABLE_KINDS.join(', ')}`,
      );
    }
    checkPollingFields(input.kind, input);
    const url = await this.checkUrl(input.kind, input.url);
    const config = await this.checkConfig(organizationId, input.kind, input.config, undefined);
    const deliveryOptions = this.checkReceiverOptions(organizationId, input.kind, input, null, {
      url,
      urlChanged: true,
    });
    await this.checkFifo(organizationId, input.kind, false, input.fifoEnabled ?? false);
    if (input.secret !== undefined && !isValidSecret(input.secret)) {
      throw new DomainError(
        'INVALID_SECRET',
        'secret must be "whsec_" followed by the base64 of 24 to 64 random bytes',
      );
    }
    const created = await this.endpoints.create(
      {
        organizationId,
        applicationId,
        kind: input.kind,
        url,
        description: input.description ?? null,
        config,
        eventTypes: input.eventTypes ?? [],
        channels: input.channels ?? [],
        filter: checkedFilter(input.filter),
        status: input.status ?? 'active',
        fifoEnabled: input.fifoEnabled ?? false,
        retry: input.retry === undefined ? DEFAULT_RETRY_POLICY : validateRetryPolicy(input.retry),
        rateLimitPerSecond: input.rateLimitPerSecond ?? null,
        deliveryOptions,
        consecutiveFailures: 0,
        failingSince: null,
        lastSuccessAt: null,
        disabledReason: input.status === 'disabled' ? 'manual' : null,
        disabledAt: input.status === 'disabled' ? new Date() : null,
        operational,
      },
      input.kind === 'http' ? (input.secret ?? generateSecret()) : null,
      await this.endpointLimit(organizationId),
      this.told([(endpoint) => ['endpoint.created', { kind: endpoint.kind }]]),
    );
    return created;
  }

  /** The most endpoints the organization's plan allows (HOOKBASE_MAX_ENDPOINTS_<PLAN>). */
  private async endpointLimit(organizationId: string): Promise<number> {
    const organization = await this.organizations.findById(organizationId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    return this.config.limits.maxEndpoints[organization.plan];
  }

  async update(endpoint: EndpointEntity, input: UpdateEndpointInput): Promise<EndpointEntity> {
    checkPollingFields(endpoint.kind, input);
    const urlBefore = endpoint.url;
    if (input.url !== undefined) endpoint.url = await this.checkUrl(endpoint.kind, input.url);
    endpoint.deliveryOptions = this.checkReceiverOptions(
      endpoint.organizationId,
      endpoint.kind,
      input,
      endpoint.deliveryOptions,
      { url: endpoint.url, urlChanged: endpoint.url !== urlBefore },
    );
    if (input.fifoEnabled !== undefined) {
      await this.checkFifo(
        endpoint.organizationId,
        endpoint.kind,
        endpoint.fifoEnabled,
        input.fifoEnabled,
      );
    }
    if (input.description !== undefined) endpoint.description = input.description;
    if (input.config !== undefined) {
      endpoint.config = await this.checkConfig(
        endpoint.organizationId,
        endpoint.kind,
        input.config,
        endpoint.config,
      );
    }
    if (input.eventTypes !== undefined) endpoint.eventTypes = input.eventTypes;
    // Routing changes apply to events fanned out from now on; messages already made stay.
    if (input.channels !== undefined) endpoint.channels = input.channels;
    if (input.filter !== undefined) endpoint.filter = checkedFilter(input.filter);
    const statusBefore = endpoint.status;
    if (input.status !== undefined && input.status !== endpoint.status) {
      if (input.status === 'disabled') {
        endpoint.disabledReason = 'manual';
        endpoint.disabledAt = new Date();
      } else if (endpoint.status === 'disabled') {
        // Enabled again: the reason goes, and a new streak starts from the next attempt.
        endpoint.disabledReason = null;
        endpoint.disabledAt = null;
        endpoint.consecutiveFailures = 0;
        endpoint.failingSince = null;
      }
      endpoint.status = input.status;
    }
    if (input.fifoEnabled !== undefined) endpoint.fifoEnabled = input.fifoEnabled;
    if (input.retry !== undefined) endpoint.retry = validateRetryPolicy(input.retry);
    if (input.rateLimitPerSecond !== undefined)
      endpoint.rateLimitPerSecond = input.rateLimitPerSecond;
    const saved = await this.endpoints.save(
      endpoint,
      this.told([
        // What changed is named, never its values (they may hold secrets).
        () => ['endpoint.updated', { fields: Object.keys(input).sort() }],
        (after) =>
          after.status === 'disabled' && statusBefore !== 'disabled'
            ? ['endpoint.disabled', { reason: 'manual' }]
            : statusBefore === 'disabled' && after.status !== 'disabled'
              ? ['endpoint.enabled', {}]
              : null,
      ]),
    );
    return saved;
  }

  /**
   * Deletes the endpoint; stored cloud credentials, headers and auth are cleared first, as signing
   * secrets are.
   */
  async delete(endpoint: EndpointEntity): Promise<void> {
    if (hasStoredCredentials(endpoint.config) || endpoint.deliveryOptions) {
      endpoint.config = publicEndpointConfig(endpoint.config);
      endpoint.deliveryOptions = null;
      await this.endpoints.save(endpoint);
    }
    await this.endpoints.softDelete(endpoint, this.told([() => ['endpoint.deleted', {}]]));
  }

  /**
   * The operational events of an endpoint's change, written in its transaction (the outbox): the
   * change and its events commit together. Each entry names an event for the endpoint as saved,
   * or null for none.
   */
  private told(
    events: ((
      endpoint: EndpointEntity,
    ) => [OperationalEventType, Record<string, unknown>] | null)[],
  ): AlsoInTransaction | undefined {
    const operational = this.operational;
    if (!operational) return undefined;
    return async (tx, endpoint) => {
      for (const event of events) {
        const told = event(endpoint);
        if (told)
          await operational.emitAll(
            told[0],
            [{ subject: endpoint, data: told[1] }],
            new Date(),
            tx,
          );
      }
    };
  }

  async rotateSecret(endpoint: EndpointEntity, overlapSeconds: number): Promise<string> {
    const secret = generateSecret();
    await this.endpoints.rotateSecret(endpoint.id, secret, overlapSeconds);
    return secret;
  }

  private async checkFifo(
    organizationId: string,
    kind: EndpointKind,
    current: boolean,
    requested: boolean,
  ) {
    if (requested === current || !requested) return;
    const organization = await this.organizations.findById(organizationId);
    if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    checkFifoSetting({ plan: organization.plan, kind, currentlyEnabled: current, requested });
  }

  /**
   * An http endpoint's headers, auth, timeout and CA as stored (sensitive parts sealed); other
   * kinds take none (VALIDATION_FAILED naming each field).
   */
  private checkReceiverOptions(
    organizationId: string,
    kind: EndpointKind,
    input: ReceiverOptionsInput,
    current: EndpointEntity['deliveryOptions'],
    target: { url: string | null; urlChanged: boolean },
  ): EndpointEntity['deliveryOptions'] {
    if (kind !== 'http') {
      const given = (['headers', 'auth', 'timeoutMs', 'tlsCa'] as const).filter(
        (field) => input[field] !== undefined && input[field] !== null,
      );
      if (given.length > 0) {
        const issues = given.map((field) => ({
          path: field,
          message: 'only http endpoints take it',
        }));
        throw new DomainError(
          'VALIDATION_FAILED',
          `Invalid request: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
          { issues },
        );
      }
      return null;
    }
    if (!hasReceiverOptionInput(input) && (!target.urlChanged || !current?.auth)) return current;
    return this.receiverOptions.seal(organizationId, input, current, {
      url: target.url!,
      urlChanged: target.urlChanged,
      maxTimeoutMs: this.config.delivery.timeoutMs,
    });
  }

  /**
   * A cloud endpoint's config, validated for its kind and with its credentials sealed (see
   * EndpointCredentials.seal: bound to their target; left out only under the organization's
   * host-identity grant); an endpoint override is held to the same private-target rule as HTTP
   * URLs, names resolved included. http and polling endpoints take no config: only `{}`.
   */
  private async checkConfig(
    organizationId: string,
    kind: EndpointKind,
    raw: Record<string, unknown> | undefined,
    current: Record<string, unknown> | undefined,
  ): Promise<Record<string, unknown>> {
    if (!isCloudDestinationKind(kind)) {
      const keys = Object.keys(raw ?? {});
      if (keys.length > 0) {
        const issues = keys.map((key) => ({
          path: `config.${key}`,
          message: `${kind} endpoints take no config`,
        }));
        throw new DomainError(
          'VALIDATION_FAILED',
          `Invalid request: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
          { issues },
        );
      }
      return {};
    }
    const allowPrivateTargets = this.config.delivery.allowPrivateTargets;
    const config = this.credentials.seal(organizationId, kind, raw, {
      allowPrivateTargets,
      current,
      hostIdentity: await this.organizations.hostCloudIdentity(organizationId),
    });
    if (typeof config.endpoint === 'string') {
      // A cloud override must resolve now: it is where credentials go.
      await this.refusePrivateNames(new URL(config.endpoint), 'config.endpoint', true);
    }
    return config;
  }

  /**
   * An HTTP endpoint needs a URL that is not aimed at this network. IP literals are checked by
   * the rule itself; names are resolved here too (and again at every send, against rebinding).
   */
  private async checkUrl(kind: EndpointKind, raw: string | undefined): Promise<string | null> {
    if (kind !== 'http') return null;
    if (raw === undefined)
      throw new DomainError('VALIDATION_FAILED', 'url is required for http endpoints');
    const allowPrivate = this.config.delivery.allowPrivateTargets;
    const url = checkTargetUrl(raw, { allowPrivate });
    await this.refusePrivateNames(url, 'url', false);
    return url.toString();
  }

  /**
   * Unless private targets are allowed, refuses a host name that resolves into this network, and
   * with `refuseUnresolved` one whose lookup fails or times out (what it resolves to cannot be
   * checked). Either way the name is checked again at every connection.
   */
  private async refusePrivateNames(
    url: URL,
    field: string,
    refuseUnresolved: boolean,
  ): Promise<void> {
    await checkTargetName(url, field, {
      allowPrivate: this.config.delivery.allowPrivateTargets,
      timeoutMs: DNS_CHECK_TIMEOUT_MS,
      refuseUnresolved,
    });
  }
}

/** A filter as it will be stored: compiled once to refuse (FILTER_INVALID, with where) a bad one. */
function checkedFilter(
  filter: Record<string, unknown> | null | undefined,
): Record<string, unknown> | null {
  if (filter === undefined || filter === null) return null;
  compileFilter(filter);
  return filter;
}
