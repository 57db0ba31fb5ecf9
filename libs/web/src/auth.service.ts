import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual, createHash } from 'node:crypto';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError } from '@hookbase/domain';
import { ApiKeyRepository } from '@hookbase/persistence';

/**
 * Resolves credentials. API keys are looked up by hash and cached briefly (HOOKBASE_API_KEY_CACHE_MS),
 * so ingest does not query PostgreSQL on every event; a revoked key stops working within that time.
 */
@Injectable()
export class AuthService {
  private readonly cache = new Map<string, { organizationId: string | null; until: number }>();

  constructor(
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
    private readonly apiKeys: ApiKeyRepository,
  ) {}

  async organizationForKey(key: string): Promise<string> {
    const now = Date.now();
    const cached = this.cache.get(key);
    let organizationId = cached && cached.until > now ? cached.organizationId : undefined;
    if (organizationId === undefined) {
      organizationId = await this.apiKeys.findOrganizationId(key);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, { organizationId, until: now + this.config.auth.apiKeyCacheMs });
    }
    if (!organizationId) throw new DomainError('UNAUTHORIZED', 'Invalid API key');
    return organizationId;
  }

  isAdminToken(token: string): boolean {
    const expected = this.config.auth.adminToken;
    if (!expected) return false;
    // Compare digests so neither length nor content leaks through timing.
    const digest = (value: string) => createHash('sha256').update(value).digest();
    return timingSafeEqual(digest(token), digest(expected));
  }
}

export function bearerToken(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  if (!match) {
    throw new DomainError('UNAUTHORIZED', 'Send Authorization: Bearer <api key or admin token>');
  }
  return match[1];
}
