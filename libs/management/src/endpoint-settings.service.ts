import { Inject, Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  checkFifoSetting,
  checkPollingFields,
  checkTargetUrl,
  CreateEndpointInput,
  DEFAULT_RETRY_POLICY,
  DomainError,
  EndpointKind,
  isPrivateAddress,
  UpdateEndpointInput,
  validateRetryPolicy,
} from '@hookbase/domain';
import { EndpointEntity, EndpointRepository, OrganizationRepository } from '@hookbase/persistence';
import { generateSecret, isValidSecret } from '@hookbase/signing';

/** Endpoint kinds this build can deliver to; the others are refused rather than stored unused. */
const AVAILABLE_KINDS: readonly EndpointKind[] = ['http', 'polling'];
const DNS_CHECK_TIMEOUT_MS = 2_000;

/** Create, change and delete endpoints, with every rule checked before anything is stored. */
@Injectable()
export class EndpointSettingsService {
  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly endpoints: EndpointRepository,
    private readonly organizations: OrganizationRepository,
  ) {}

  async create(organizationId: string, input: CreateEndpointInput): Promise<EndpointEntity> {
    if (!AVAILABLE_KINDS.includes(input.kind)) {
      throw new DomainError(
        'FEATURE_NOT_AVAILABLE',
        `Endpoint kind "${input.kind}" is not available yet; available: ${AVAILABLE_KINDS.join(', ')}`,
      );
    }
    checkPollingFields(input.kind, input);
    const url = await this.checkUrl(input.kind, input.url);
    await this.checkFifo(organizationId, input.kind, false, input.fifoEnabled ?? false);
    if (input.secret !== undefined && !isValidSecret(input.secret)) {
      throw new DomainError(
        'INVALID_SECRET',
        'secret must be "whsec_" followed by the base64 of 24 to 64 random bytes',
      );
    }
    return this.endpoints.create(
      {
        organizationId,
        kind: input.kind,
        url,
        description: input.description ?? null,
        config: input.config ?? {},
        eventTypes: input.eventTypes ?? [],
        status: input.status ?? 'active',
        fifoEnabled: input.fifoEnabled ?? false,
        retry: input.retry === undefined ? DEFAULT_RETRY_POLICY : validateRetryPolicy(input.retry),
        rateLimitPerSecond: input.rateLimitPerSecond ?? null,
      },
      input.kind === 'http' ? (input.secret ?? generateSecret()) : null,
    );
  }

  async update(endpoint: EndpointEntity, input: UpdateEndpointInput): Promise<EndpointEntity> {
    checkPollingFields(endpoint.kind, input);
    if (input.url !== undefined) endpoint.url = await this.checkUrl(endpoint.kind, input.url);
    if (input.fifoEnabled !== undefined) {
      await this.checkFifo(
        endpoint.organizationId,
        endpoint.kind,
        endpoint.fifoEnabled,
        input.fifoEnabled,
      );
    }
    if (input.description !== undefined) endpoint.description = input.description;
    if (input.config !== undefined) endpoint.config = input.config;
    if (input.eventTypes !== undefined) endpoint.eventTypes = input.eventTypes;
    if (input.status !== undefined) endpoint.status = input.status;
    if (input.fifoEnabled !== undefined) endpoint.fifoEnabled = input.fifoEnabled;
    if (input.retry !== undefined) endpoint.retry = validateRetryPolicy(input.retry);
    if (input.rateLimitPerSecond !== undefined)
      endpoint.rateLimitPerSecond = input.rateLimitPerSecond;
    return this.endpoints.save(endpoint);
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
   * An HTTP endpoint needs a URL that is not aimed at this network. IP literals are checked by
   * the rule itself; names are resolved here too (and again at every send, against rebinding).
   */
  private async checkUrl(kind: EndpointKind, raw: string | undefined): Promise<string | null> {
    if (kind !== 'http') return null;
    if (raw === undefined)
      throw new DomainError('VALIDATION_FAILED', 'url is required for http endpoints');
    const allowPrivate = this.config.delivery.allowPrivateTargets;
    const url = checkTargetUrl(raw, { allowPrivate });
    if (!allowPrivate) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const addresses = await Promise.race([
        lookup(host, { all: true }).catch(() => []),
        new Promise<[]>((resolve) => setTimeout(() => resolve([]), DNS_CHECK_TIMEOUT_MS).unref()),
      ]);
      const inside = addresses.find((entry) => isPrivateAddress(entry.address));
      if (inside) {
        throw new DomainError(
          'URL_NOT_ALLOWED',
          `${host} resolves to ${inside.address}, a private address; set HOOKBASE_ALLOW_PRIVATE_TARGETS=true to allow it`,
        );
      }
    }
    return url.toString();
  }
}
