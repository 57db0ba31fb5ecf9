import { OpenApiDocument } from './document';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function resolve(document: OpenApiDocument, schema: unknown): unknown {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  if (!ref) return schema;
  return document.components.schemas[ref.replace('#/components/schemas/', '')];
}

/**
 * The document as one self-contained HTML page (no scripts, styles or assets from elsewhere):
 * every operation with its method, path, summary, auth, parameters, request schema and answers.
 */
export function renderDocsPage(document: OpenApiDocument): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const auth = op.security.map((s) => Object.keys(s).join(', ')).join(' or ') || 'none';
      const params = (op.parameters ?? [])
        .map((p) => `<code>${escape(String(p.name))}</code> (${escape(String(p.in))})`)
        .join(', ');
      const body = op.requestBody as
        { required: boolean; content: Record<string, { schema: unknown }> } | undefined;
      const bodySchema = body ? resolve(document, body.content['application/json'].schema) : null;
      const responses = Object.entries(op.responses)
        .map(([status, r]) => `<li><b>${escape(status)}</b> ${escape(String(r.description))}</li>`)
        .join('');
      sections.push(
        `<section id="${escape(op.operationId)}">` +
          `<h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>` +
          `<p>${escape(op.summary)}</p><p>Auth: ${escape(auth)}</p>` +
          (params ? `<p>Parameters: ${params}</p>` : '') +
          (bodySchema
            ? `<details><summary>Request body${body?.required ? '' : ' (optional)'}</summary><pre>${escape(JSON.stringify(bodySchema, null, 2))}</pre></details>`
            : '') +
          `<ul>${responses}</ul></section>`,
      );
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
section{border-top:1px solid #ddd;padding:.5rem 0}h3{margin:.5rem 0;font-size:1.05rem}
.m{display:inline-block;min-width:4.5rem;font-family:monospace}.get{color:#06c}.post{color:#080}
.patch{color:#a60}.delete{color:#c00}pre{background:#f6f6f6;padding:.5rem;overflow:auto}
</style></head><body>
<h1>${escape(document.info.title)} <small>${escape(document.info.version)}</small></h1>
<p>${escape(document.info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escape(document.openapi)})</p>
${sections.join('\n')}
</body></html>
`;
}
