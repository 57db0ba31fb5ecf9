import { Inject, Injectable } from '@nestjs/common';
import { HOOKBASE_CONFIG, HookbaseConfig } from '@hookbase/config';
import { DomainError } from '@hookbase/domain';
import { ApplicationRepository } from '@hookbase/persistence';

/** Applications remembered at most; past it the memory starts over. */
const REMEMBERED_MAX = 100_000;

/**
 * Turns the application a publish names (id or uid) into its id, answering 404
 * APPLICATION_NOT_FOUND for one the organization does not have. An application found is
 * remembered for the key cache time (HOOKBASE_API_KEY_CACHE_MS), so a steady publisher asks the
 * store once per interval; one not found is asked for again each time. A deleted application may
 * so still be named for that long: its endpoints are deleted with it, so the event reaches nobody.
 */
@Injectable()
export class ApplicationLookup {
  private remembered = new Map<string, { id: string; until: number }>();

  constructor(
    private readonly applications: ApplicationRepository,
    @Inject(HOOKBASE_CONFIG) private readonly config: HookbaseConfig,
  ) {}

  async resolve(organizationId: string, reference: string): Promise<string> {
    const key = `${organizationId}\u0000${reference}`;
    const now = Date.now();
    const known = this.remembered.get(key);
    if (known && known.until > now) return known.id;
    const application = await this.applications.find(organizationId, reference);
    if (!application) {
      this.remembered.delete(key);
      throw new DomainError('APPLICATION_NOT_FOUND', 'Application not found', {
        applicationId: reference,
      });
    }
    const ttl = this.config.auth.apiKeyCacheMs;
    if (ttl > 0) {
      if (this.remembered.size >= REMEMBERED_MAX) this.remembered = new Map();
      this.remembered.set(key, { id: application.id, until: now + ttl });
    }
    return application.id;
  }
}
