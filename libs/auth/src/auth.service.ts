import { Inject, Injectable, Optional } from '@nestjs/common';
import { timingSafeEqual, createHash } from 'node:crypto';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import {
  apiKeyCacheUntil,
  apiKeyRecheckDue,
  clientAddressKey,
  DomainError,
  isWellFormedApiKey,
  isWellFormedPortalToken,
  MAX_BEARER_LENGTH,
} from '@hookbase/domain';
import { ApiKeyRepository, hashApiKey, PortalTokenRepository } from '@hookbase/persistence';
import { LimitedPrincipal, RequestLimits } from './request-limits';

/** What a portal token narrows its requests to: one application, perhaps only reading. */
export interface PortalScope {
  applicationId: string;
  readOnly: boolean;
}

/**
 * The credential a request authenticated with: an API key, or (only where the edge admits them,
 * see authenticateCaller) a portal token, which carries its scope; its `keyId` is the token's id.
 */
export type ApiKeyPrincipal = LimitedPrincipal & { portal?: PortalScope };

/** What AuthService needs of the key store: one lookup by hash. */
export type ApiKeyLookup = Pick<ApiKeyRepository, 'findActiveByHash'>;
/** What AuthService needs of the portal token store: one lookup by hash. */
export type PortalTokenLookup = Pick<PortalTokenRepository, 'findActiveByHash'>;

/** A credential that proved valid: who it is, and when it expires (null: never). */
interface CheckedCredential {
  principal: ApiKeyPrincipal;
  expiresAt: Date | null;
}

interface CachedKey extends CheckedCredential {
  until: number;
  /** A check in the background is under way (see apiKeyRecheckDue). */
  rechecking?: boolean;
}

const INVALID_KEY = 'Invalid API key';

/**
 * Resolves credentials. Only a key that proved valid is remembered, by its SHA-256 (never the
 * bearer string), for HOOKBASE_API_KEY_CACHE_MS and never past its expiry, at most
 * HOOKBASE_API_KEY_CACHE_SIZE of them (the oldest goes first): so ingest does not ask PostgreSQL
 * on every event, and a revoked key stops working within the cache time (at once in the process
 * that revoked it). A key in use is checked again in the background in the last quarter of its
 * cache time, so a steady client never waits for that check. A bearer string that cannot be a key (wrong length or characters) is refused
 * without a lookup; failed authentications are counted per client address and, past
 * HOOKBASE_AUTH_FAILURES_PER_MINUTE, answered 429 before any lookup. A key found in the cache, or
 * the right admin token, is admitted even then, so an attacker sharing an address cannot lock out
 * clients that hold valid keys.
 */
@Injectable()
export class AuthService {
  private readonly cache = new Map<string, CachedKey>();

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    @Inject(ApiKeyRepository) private readonly apiKeys: ApiKeyLookup,
    private readonly limits: RequestLimits,
    @Optional()
    @Inject(PortalTokenRepository)
    private readonly portalTokens: PortalTokenLookup | null = null,
  ) {}

  /** How many keys are remembered now: the bound a test checks. */
  get cachedKeyCount(): number {
    return this.cache.size;
  }

  async authenticateApiKey(
    authorization: string | string[] | undefined,
    clientAddress: string | undefined,
  ): Promise<ApiKeyPrincipal> {
    const token = readBearer(authorization);
    const keyHash = token !== null && isWellFormedApiKey(token) ? hashApiKey(token) : null;
    const now = Date.now();
    if (keyHash !== null) {
      const remembered = this.fromCache(keyHash, now, () => this.lookUpKey(keyHash));
      if (remembered) return remembered;
    }
    const address = clientAddressKey(clientAddress);
    await this.limits.refuseIfBlocked(address);
    if (token === null) return this.fail(address, missingBearer(authorization));
    if (keyHash === null) return this.fail(address, INVALID_KEY);
    const checked = await this.lookUpKey(keyHash);
    if (!checked) return this.fail(address, INVALID_KEY);
    this.remember(keyHash, checked, now);
    return checked.principal;
  }

  /**
   * An API key or a portal token (the management API admits both; ingest only keys). A portal
   * token is remembered like a key, never past its expiry: revoking one stops it within the key
   * cache time (at once in the process that revoked it).
   */
  async authenticateCaller(
    authorization: string | string[] | undefined,
    clientAddress: string | undefined,
  ): Promise<ApiKeyPrincipal> {
    const token = readBearer(authorization);
    if (token === null || !isWellFormedPortalToken(token) || !this.portalTokens) {
      return this.authenticateApiKey(authorization, clientAddress);
    }
    const tokenHash = hashApiKey(token);
    const now = Date.now();
    const remembered = this.fromCache(tokenHash, now, () => this.lookUpPortalToken(tokenHash));
    if (remembered) return remembered;
    const address = clientAddressKey(clientAddress);
    await this.limits.refuseIfBlocked(address);
    const checked = await this.lookUpPortalToken(tokenHash);
    if (!checked) return this.fail(address, 'Invalid or expired portal token');
    this.remember(tokenHash, checked, now);
    return checked.principal;
  }

  private async lookUpKey(keyHash: string): Promise<CheckedCredential | null> {
    const found = await this.apiKeys.findActiveByHash(keyHash);
    if (!found) return null;
    return {
      principal: { keyId: found.keyId, organizationId: found.organizationId, plan: found.plan },
      expiresAt: found.expiresAt,
    };
  }

  private async lookUpPortalToken(tokenHash: string): Promise<CheckedCredential | null> {
    const found = await this.portalTokens!.findActiveByHash(tokenHash);
    if (!found) return null;
    return {
      principal: {
        keyId: found.tokenId,
        organizationId: found.organizationId,
        plan: found.plan,
        portal: { applicationId: found.applicationId, readOnly: found.readOnly },
      },
      expiresAt: found.expiresAt,
    };
  }

  /**
   * The remembered principal of a credential, or undefined when none is remembered or its copy
   * ran out. A copy in its last quarter starts a check in the background (`lookUp`): a credential
   * still valid is remembered anew from that check's start, one no longer found is forgotten, and
   * a failed check leaves the copy to run out.
   */
  private fromCache(
    hash: string,
    now: number,
    lookUp: () => Promise<CheckedCredential | null>,
  ): ApiKeyPrincipal | undefined {
    const cached = this.cache.get(hash);
    if (!cached) return undefined;
    if (cached.until <= now) {
      this.cache.delete(hash);
      return undefined;
    }
    if (!cached.rechecking && apiKeyRecheckDue(now, this.config.auth.apiKeyCacheMs, cached)) {
      cached.rechecking = true;
      lookUp().then(
        (checked) => {
          // Forgotten (revoked here) or replaced meanwhile: that decision stands.
          if (this.cache.get(hash) !== cached) return;
          if (checked) this.remember(hash, checked, now);
          else this.cache.delete(hash);
        },
        () => {
          cached.rechecking = false;
        },
      );
    }
    return cached.principal;
  }

  /** Whether a bearer string has the shape of a portal token (the admin routes answer it 404). */
  isPortalToken(token: string): boolean {
    return isWellFormedPortalToken(token);
  }

  /** Forgets an application's portal tokens in this process at once (revoked here). */
  forgetPortalAccess(applicationId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal.portal?.applicationId === applicationId) this.cache.delete(hash);
    }
  }

  /** Admits the installation's admin token; anything else is a failed authentication. */
  async authenticateAdmin(
    authorization: string | string[] | undefined,
    clientAddress: string | undefined,
  ): Promise<void> {
    const token = readBearer(authorization);
    if (token !== null && this.isAdminToken(token)) return;
    const address = clientAddressKey(clientAddress);
    await this.limits.refuseIfBlocked(address);
    return this.fail(
      address,
      token === null ? missingBearer(authorization) : 'Invalid admin token',
    );
  }

  isAdminToken(token: string): boolean {
    const expected = this.config.auth.adminToken;
    if (!expected) return false;
    // Compare digests so neither length nor content leaks through timing.
    const digest = (value: string) => createHash('sha256').update(value).digest();
    return timingSafeEqual(digest(token), digest(expected));
  }

  /** Forgets a key in this process at once (revoked or rotated here). */
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal.keyId === keyId) this.cache.delete(hash);
    }
  }

  /** Forgets an organization's keys in this process (its plan changed here). */
  forgetOrganization(organizationId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.principal.organizationId === organizationId) this.cache.delete(hash);
    }
  }

  /** Remembers a credential checked at `checkedAt`, for the cache time and never past its expiry. */
  private remember(keyHash: string, checked: CheckedCredential, checkedAt: number): void {
    const entry: CachedKey = {
      ...checked,
      until: apiKeyCacheUntil(checkedAt, this.config.auth.apiKeyCacheMs, checked.expiresAt),
    };
    if (entry.until <= Date.now()) return;
    this.cache.delete(keyHash);
    while (this.cache.size >= this.config.auth.apiKeyCacheSize) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      this.cache.delete(oldest.value);
    }
    this.cache.set(keyHash, entry);
  }

  private async fail(address: string, message: string): Promise<never> {
    await this.limits.recordFailure(address);
    throw new DomainError('UNAUTHORIZED', message);
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
// "Bearer", some spaces and the longest token: a longer header is not parsed at all.
const MAX_AUTHORIZATION_LENGTH = MAX_BEARER_LENGTH + 32;

/** The bearer token of an Authorization header, or null when there is none or it is too long. */
export function readBearer(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > MAX_AUTHORIZATION_LENGTH) return null;
  const match = BEARER.exec(value);
  if (!match || match[1].length > MAX_BEARER_LENGTH) return null;
  return match[1];
}

function missingBearer(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.length > MAX_BEARER_LENGTH) {
    return `Authorization header is longer than any key or token (${MAX_BEARER_LENGTH} characters)`;
  }
  return 'Send Authorization: Bearer <api key or admin token>';
}
