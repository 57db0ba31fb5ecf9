import { HOOKBASE_CATALOG } from './catalog';
import { renderDocsPage } from './docs-page';
import { buildOpenApiDocument, errorCodesOf } from './document';

describe('the OpenAPI document', () => {
  const document = buildOpenApiDocument(HOOKBASE_CATALOG);
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

  it('has the required top-level fields of OpenAPI 3.1', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toEqual(expect.any(String));
    expect(document.info.version).toEqual(expect.any(String));
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });

  it('lists every catalog route once, and every route answers at least one coded error', () => {
    expect(operations).toHaveLength(HOOKBASE_CATALOG.routes.length);
    for (const route of HOOKBASE_CATALOG.routes) {
      expect(errorCodesOf(route).length).toBeGreaterThan(0);
      const op = document.paths[route.path][route.method];
      const errors = Object.keys(op.responses).filter((status) => Number(status) >= 400);
      expect({ route: route.operationId, errors: errors.length > 0 }).toEqual({
        route: route.operationId,
        errors: true,
      });
    }
  });

  it('has well-formed paths whose parameters are all declared', () => {
    for (const { path, op } of operations) {
      expect(path).toMatch(/^(\/(?:[a-z0-9.-]+|\{[A-Za-z][A-Za-z0-9]*\}))+$/);
      const names = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared).toEqual(names);
    }
  });

  it('is structurally valid: unique operation ids, resolvable refs, responses with descriptions', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)];
    for (const [, name] of refs) expect(document.components.schemas[name]).toBeDefined();
    for (const { method, op } of operations) {
      expect(['get', 'post', 'patch', 'delete', 'put']).toContain(method);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status).toMatch(/^[1-5]\d\d$/);
        expect(response.description).toEqual(expect.any(String));
      }
      for (const requirement of op.security) {
        for (const scheme of Object.keys(requirement)) {
          expect(document.components.securitySchemes[scheme]).toBeDefined();
        }
      }
    }
  });

  it('takes request schemas from the zod inputs, defaults optional', () => {
    type ObjectSchema = {
      properties: Record<string, { const?: string; required?: string[] }>;
      required?: string[];
      additionalProperties?: boolean;
    };
    // One branch per kind: http (and polling) with `kind` defaulted, then each cloud kind with
    // its config schema.
    const [http, ...cloud] = (
      document.components.schemas.CreateEndpoint as { anyOf: ObjectSchema[] }
    ).anyOf;
    expect(http.properties.url).toEqual({ type: 'string', maxLength: 2048 });
    expect(http.required ?? []).not.toContain('kind');
    expect(http.additionalProperties).toBe(false);
    expect(cloud.map((branch) => branch.properties.kind.const)).toEqual([
      'sqs',
      'sns',
      'eventbridge',
      'pubsub',
      's3',
    ]);
    for (const branch of cloud) {
      expect(branch.required).toEqual(expect.arrayContaining(['kind', 'config']));
      expect(branch.additionalProperties).toBe(false);
    }
    expect(cloud[0].properties.config.required).toEqual(['region', 'queueUrl']);
    const publish = document.components.schemas.PublishEvent as { required: string[] };
    expect(publish.required.sort()).toEqual(['eventType', 'payload']);
  });

  it('renders a self-contained HTML page', () => {
    const page = renderDocsPage(document);
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toMatch(/<script|src=|https?:\/\//);
    for (const { path } of operations) expect(page).toContain(path.replace(/&/g, '&#38;'));
  });
});
