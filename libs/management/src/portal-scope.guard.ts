import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyPrincipal } from '@hookbase/auth';
import { DomainError, ErrorCode } from '@hookbase/domain';
import { ApplicationRepository } from '@hookbase/persistence';

/** The route parameters that name something an application owns, and how each is not found. */
const OWNED_PARAMS: readonly {
  param: string;
  kind: 'endpoint' | 'message' | 'dlq' | 'event' | 'application';
  code: ErrorCode;
  message: string;
}[] = [
  {
    param: 'endpointId',
    kind: 'endpoint',
    code: 'ENDPOINT_NOT_FOUND',
    message: 'Endpoint not found',
  },
  { param: 'messageId', kind: 'message', code: 'MESSAGE_NOT_FOUND', message: 'Message not found' },
  { param: 'dlqId', kind: 'dlq', code: 'DLQ_ENTRY_NOT_FOUND', message: 'DLQ entry not found' },
  { param: 'eventId', kind: 'event', code: 'EVENT_NOT_FOUND', message: 'Event not found' },
  {
    param: 'appId',
    kind: 'application',
    code: 'APPLICATION_NOT_FOUND',
    message: 'Application not found',
  },
];

/**
 * After ApiKeyGuard: a portal token reaches an endpoint, a message, a DLQ entry, an event or an
 * application named in the route only when it is, or belongs to, its own application; anything
 * else is answered as not found, the same answer as for an id that does not exist. API keys pass
 * untouched.
 */
@Injectable()
export class PortalScopeGuard implements CanActivate {
  constructor(private readonly applications: ApplicationRepository) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context
      .switchToHttp()
      .getRequest<FastifyRequest & { apiKey?: ApiKeyPrincipal }>();
    const portal = request.apiKey?.portal;
    if (!portal) return true;
    const params = (request.params ?? {}) as Record<string, string>;
    for (const { param, kind, code, message } of OWNED_PARAMS) {
      const id = params[param];
      if (id === undefined) continue;
      const owner = await this.applications.ownerOf(request.apiKey!.organizationId, kind, id);
      if (owner !== portal.applicationId) throw new DomainError(code, message);
    }
    return true;
  }
}
