import { RequestMethod, SetMetadata, Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import { z } from 'zod';
import { ErrorCode } from '@hookbase/domain';

/**
 * A route's OpenAPI description, declared on its handler with @DescribeRoute beside the Nest
 * decorators that route it. Method and path are not repeated: they are read from Nest's own
 * metadata, so the document cannot name a route the controllers do not register, and a
 * registered route without a description is refused (UndescribedRoutesError).
 */

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';
export type Security = 'none' | 'apiKey' | 'admin';

/** The document's tags, in the order it lists them. */
export const API_TAGS = [
  'Events',
  'Organizations',
  'API keys',
  'Event types',
  'Applications',
  'Endpoints',
  'Replays',
  'Message log',
  'DLQ',
  'Operations',
] as const;
export type ApiTag = (typeof API_TAGS)[number];

export interface NamedSchema {
  /** Name under components.schemas. */
  name: string;
  schema: z.ZodType;
}

/** A loose JSON Schema for a success body: only fields the code returns. */
export type JsonSchema = Record<string, unknown>;

/** What a handler's @DescribeRoute says; method and path come from its Nest decorators. */
export interface RouteDescription {
  operationId: string;
  tag: ApiTag;
  summary: string;
  /** Must be the guard the route runs under (the OpenAPI test checks it). */
  security: Security;
  /** The zod schema the handler parses its body with. */
  body?: NamedSchema & { required: boolean };
  /** Query parameters, from the object schema the handler parses its query with. */
  query?: NamedSchema;
  success: { status: number; description: string; schema: JsonSchema; contentType?: string };
  /** Error codes besides those implied by security, body and store access. */
  errors: ErrorCode[];
  /** Reads or writes PostgreSQL (so 503 SERVICE_UNAVAILABLE when it is down). */
  usesStore: boolean;
}

/** Limits that the running configuration sets, so the served document states them. */
export interface CatalogLimits {
  maxBatchEvents: number;
}

/** A description, or one that depends on the running limits (a batch's size). */
export type RouteDescriber = RouteDescription | ((limits: CatalogLimits) => RouteDescription);

export interface RouteSpec extends RouteDescription {
  method: HttpMethod;
  /** OpenAPI form: `/api/organizations/{orgId}`. */
  path: string;
}

export interface RouteCatalog {
  title: string;
  version: string;
  description: string;
  routes: RouteSpec[];
}

const ROUTE_DESCRIPTION = 'hookbase:route-description';

/** Describes the handler's route in the OpenAPI document. */
export const DescribeRoute = (describer: RouteDescriber) =>
  SetMetadata(ROUTE_DESCRIPTION, describer);

const METHODS: Partial<Record<RequestMethod, HttpMethod>> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
};

/** Registered routes with no @DescribeRoute, or of a method the document cannot state. */
export class UndescribedRoutesError extends Error {
  readonly code = 'UNDESCRIBED_ROUTES';

  constructor(readonly routes: string[]) {
    super(
      `routes the OpenAPI document cannot describe (no @DescribeRoute, or a method other than GET, POST, PATCH and DELETE): ${routes.join(', ')}`,
    );
  }
}

/** Nest paths (`api/organizations/:orgId`, `/`) joined into the OpenAPI form. */
export function openApiPath(...parts: string[]): string {
  const joined = parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
  return `/${joined}`.replace(/:(\w+)/g, '{$1}');
}

const pathsOf = (path: string | string[] | undefined): string[] =>
  Array.isArray(path) ? path : [path ?? ''];

/**
 * Every route the controllers register, with its description, in the order the controllers
 * declare them. Throws UndescribedRoutesError naming each route that has none.
 */
export function describedRoutes(controllers: Type[], limits: CatalogLimits): RouteSpec[] {
  const reflector = new Reflector();
  const routes: RouteSpec[] = [];
  const undescribed: string[] = [];
  for (const controller of controllers) {
    const prefixes = pathsOf(reflector.get<string | string[]>(PATH_METADATA, controller));
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      // The descriptor's value, so that reading a getter never runs it.
      const handler = Object.getOwnPropertyDescriptor(controller.prototype, name)?.value as unknown;
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const target = handler as (...args: unknown[]) => unknown;
      const requestMethod = reflector.get<RequestMethod | undefined>(METHOD_METADATA, target);
      const routePath = reflector.get<string | string[] | undefined>(PATH_METADATA, target);
      if (requestMethod === undefined || routePath === undefined) continue;
      const method = METHODS[requestMethod];
      const describer = reflector.get<RouteDescriber | undefined>(ROUTE_DESCRIPTION, target);
      for (const prefix of prefixes) {
        for (const suffix of pathsOf(routePath)) {
          const path = openApiPath(prefix, suffix);
          if (!method || !describer) {
            undescribed.push(
              `${RequestMethod[requestMethod]} ${path} (${controller.name}.${name})`,
            );
            continue;
          }
          const description = typeof describer === 'function' ? describer(limits) : describer;
          routes.push({ method, path, ...description });
        }
      }
    }
  }
  if (undescribed.length > 0) throw new UndescribedRoutesError(undescribed);
  return routes;
}

/** The controllers that Nest modules declare, in the order given. */
export function controllersOf(modules: Type[]): Type[] {
  return modules.flatMap(
    (module) => (Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) as Type[]) ?? [],
  );
}
