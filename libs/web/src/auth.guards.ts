import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '@hookbase/domain';
import { AuthService, bearerToken } from './auth.service';

type AuthenticatedRequest = FastifyRequest & { organizationId?: string };

/**
 * Admits a request carrying an API key. A route under /organizations/:orgId only serves the key's
 * own organization; another organization's id is answered as not found, never with its data.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const organizationId = await this.auth.organizationForKey(
      bearerToken(request.headers.authorization),
    );
    const params = request.params as Record<string, string> | undefined;
    if (params?.orgId !== undefined && params.orgId !== organizationId) {
      throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    }
    request.organizationId = organizationId;
    return true;
  }
}

/** Admits only the installation's admin token. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!this.auth.isAdminToken(bearerToken(request.headers.authorization))) {
      throw new DomainError('UNAUTHORIZED', 'Invalid admin token');
    }
    return true;
  }
}

/** The organization of the API key that authenticated the request (after ApiKeyGuard). */
export const OrganizationId = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const organizationId = context.switchToHttp().getRequest<AuthenticatedRequest>().organizationId;
  if (!organizationId) throw new Error('OrganizationId used on a route without ApiKeyGuard');
  return organizationId;
});
