import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError, isWellFormedApiKey } from '@hookbase/domain';
import { ApiKeyPrincipal, AuthService, readBearer, RequestLimits } from '@hookbase/auth';

type AuthenticatedRequest = FastifyRequest & {
  organizationId?: string;
  apiKey?: ApiKeyPrincipal;
};

const COUNTS_EVENTS = 'hookbase:counts-events';

/**
 * Marks a controller whose handlers charge their key's ingest budget themselves, by the events
 * they accept (RequestLimits.takeIngest), instead of one management request.
 */
export const CountsEvents = () => SetMetadata(COUNTS_EVENTS, true);

/**
 * Admits a request carrying an API key. A route under /organizations/:orgId only serves the key's
 * own organization; another organization's id is answered as not found, never with its data.
 * Each admitted request takes one from the key's management budget (per plan), except on
 * controllers marked @CountsEvents.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly limits: RequestLimits,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = await this.auth.authenticateApiKey(request.headers.authorization, request.ip);
    const countsEvents = this.reflector.getAllAndOverride<boolean | undefined>(COUNTS_EVENTS, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!countsEvents) await this.limits.takeManagement(principal);
    const params = request.params as Record<string, string> | undefined;
    if (params?.orgId !== undefined && params.orgId !== principal.organizationId) {
      throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
    }
    request.organizationId = principal.organizationId;
    request.apiKey = principal;
    return true;
  }
}

/** Admits only the installation's admin token. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    await this.auth.authenticateAdmin(request.headers.authorization, request.ip);
    return true;
  }
}

/**
 * The admin token only, telling a valid API key apart from a wrong credential: the key is
 * answered 403 FORBIDDEN (it authenticated, but an organization's key cannot do this), anything
 * else that is not the admin token 401 as on every admin route.
 */
@Injectable()
export class AdminOnlyGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const authorization = request.headers.authorization;
    const token = readBearer(authorization);
    if (token !== null && !this.auth.isAdminToken(token) && isWellFormedApiKey(token)) {
      await this.auth.authenticateApiKey(authorization, request.ip);
      throw new DomainError('FORBIDDEN', 'An API key cannot do this: use the admin token');
    }
    await this.auth.authenticateAdmin(authorization, request.ip);
    return true;
  }
}

/** The organization of the API key that authenticated the request (after ApiKeyGuard). */
export const OrganizationId = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const organizationId = context.switchToHttp().getRequest<AuthenticatedRequest>().organizationId;
  if (!organizationId) throw new Error('OrganizationId used on a route without ApiKeyGuard');
  return organizationId;
});

/** The API key that authenticated the request (after ApiKeyGuard). */
export const AuthenticatedKey = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const key = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
  if (!key) throw new Error('AuthenticatedKey used on a route without ApiKeyGuard');
  return key;
});
