import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { DomainError, isWellFormedApiKey, portalDecision } from '@hookbase/domain';
import { ApiKeyPrincipal, AuthService, readBearer, RequestLimits } from '@hookbase/auth';

type AuthenticatedRequest = FastifyRequest & {
  organizationId?: string;
  apiKey?: ApiKeyPrincipal;
};

const COUNTS_EVENTS = 'hookbase:counts-events';
const PORTAL_ROUTE = 'hookbase:portal-route';

/** How a portal token may use a route marked application-scoped. */
interface PortalRouteOptions {
  /** A read (GET) that changes something, such as polling: refused to a read-only token. */
  readChanges?: boolean;
}

/**
 * Marks a route (or every route of a controller) as application-scoped: a portal token may use
 * it, for its own application's resources only. Every other route answers a portal token 404.
 */
export const PortalRoute = (options: PortalRouteOptions = {}) =>
  SetMetadata(PORTAL_ROUTE, { readChanges: options.readChanges ?? false });

/** How every route answers a portal token it does not serve: as if it did not exist. */
const notForPortal = () => new DomainError('NOT_FOUND', 'Not found');

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
    const principal = await this.auth.authenticateCaller(request.headers.authorization, request.ip);
    if (principal.portal) {
      const route = this.reflector.getAllAndOverride<Required<PortalRouteOptions> | undefined>(
        PORTAL_ROUTE,
        [context.getHandler(), context.getClass()],
      );
      const decision = portalDecision(
        { applicationScoped: route !== undefined, readChanges: route?.readChanges },
        request.method,
        principal.portal.readOnly,
      );
      if (decision === 'not_found') throw notForPortal();
      if (decision === 'read_only')
        throw new DomainError('FORBIDDEN', 'This portal access is read-only');
    }
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
    await refusePortalToken(this.auth, request);
    await this.auth.authenticateAdmin(request.headers.authorization, request.ip);
    return true;
  }
}

/** A portal token on an admin route: 401 if it does not work, else 404 like any route not its own. */
async function refusePortalToken(auth: AuthService, request: FastifyRequest): Promise<void> {
  const token = readBearer(request.headers.authorization);
  if (token === null || !auth.isPortalToken(token)) return;
  await auth.authenticateCaller(request.headers.authorization, request.ip);
  throw notForPortal();
}

/**
 * The admin token for any organization, or an API key for its own (as ApiKeyGuard, portal tokens
 * refused): for what an operator may do on an organization's behalf, like opening its portal.
 */
@Injectable()
export class ApiKeyOrAdminGuard implements CanActivate {
  constructor(
    private readonly auth: AuthService,
    private readonly apiKeys: ApiKeyGuard,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = readBearer(request.headers.authorization);
    const params = request.params as Record<string, string> | undefined;
    if (token !== null && this.auth.isAdminToken(token) && params?.orgId !== undefined) {
      request.organizationId = params.orgId;
      return true;
    }
    return this.apiKeys.canActivate(context);
  }
}

/** The application a portal token narrows the request to; null for an API key or the admin. */
export const ApplicationScope = createParamDecorator(
  (_: unknown, context: ExecutionContext): string | null =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey?.portal?.applicationId ?? null,
);

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
    await refusePortalToken(this.auth, request);
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
