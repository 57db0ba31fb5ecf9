import { useCallback, useEffect, useState } from 'react';
import { Client, EventType } from './api';
import { time } from './format';
import { Badge, ErrorBox } from './ui';

const POLICIES = [
  ['open', 'Open: any event type is accepted'],
  ['declared', 'Declared: only types of the catalog (not archived)'],
  ['validated', 'Validated: declared, and the payload must match the schema'],
] as const;

interface SchemaRow {
  path: string;
  type: string;
  required: boolean;
  description: string;
}

/** The properties a schema declares, nested objects flattened to dotted paths (a few levels). */
export function schemaRows(schema: unknown, prefix = '', depth = 0): SchemaRow[] {
  if (typeof schema !== 'object' || schema === null || depth > 3) return [];
  const node = schema as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  if (!node.properties) return [];
  return Object.entries(node.properties).flatMap(([name, value]) => {
    const property = (value ?? {}) as {
      type?: string | string[];
      description?: string;
      $ref?: string;
      items?: { type?: string };
    };
    const path = prefix ? `${prefix}.${name}` : name;
    const type = Array.isArray(property.type)
      ? property.type.join(' | ')
      : (property.type ?? (property.$ref ? property.$ref.replace('#/$defs/', '') : 'any'));
    const row: SchemaRow = {
      path,
      type: type === 'array' && property.items?.type ? `array of ${property.items.type}` : type,
      required: (node.required ?? []).includes(name),
      description: property.description ?? '',
    };
    return [row, ...schemaRows(property, path, depth + 1)];
  });
}

/**
 * The event type catalog: each type's schema rendered and its example, and the policy. A portal
 * (`readOnlyCatalog`) reads the catalog only: the policy is the organization's to set.
 */
export function EventTypesPage(props: { client: Client; readOnlyCatalog?: boolean }) {
  const { client, readOnlyCatalog = false } = props;
  const [types, setTypes] = useState<EventType[] | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [policy, setPolicy] = useState<string>('');
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [all, organization] = await Promise.all([
        client.get<EventType[]>('/event-types?limit=250'),
        readOnlyCatalog ? null : client.get<{ eventTypePolicy: string }>(''),
      ]);
      setTypes(all);
      if (organization) setPolicy(organization.eventTypePolicy);
      setError(null);
    } catch (caught) {
      setError(caught);
    }
  }, [client, readOnlyCatalog]);
  useEffect(() => {
    void load();
  }, [load]);

  async function changePolicy(next: string) {
    setNotice(null);
    try {
      const organization = await client.patch<{ eventTypePolicy: string }>('/event-type-policy', {
        eventTypePolicy: next,
      });
      setPolicy(organization.eventTypePolicy);
      setNotice(`Policy set to ${organization.eventTypePolicy}.`);
    } catch (caught) {
      setError(caught);
    }
  }

  const shown = types?.find((type) => type.name === selected) ?? null;
  return (
    <section>
      <div className="page-head">
        <h1>Event types</h1>
        {readOnlyCatalog ? null : (
          <label className="inline">
            Policy{' '}
            <select value={policy} onChange={(e) => void changePolicy(e.target.value)}>
              {POLICIES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorBox error={error} />
      {notice ? (
        <p role="status" className="notice">
          {notice}
        </p>
      ) : null}
      {types === null ? (
        <p>Loading…</p>
      ) : types.length === 0 ? (
        <p>
          No event types yet. Declare them through the API, or import an OpenAPI document with{' '}
          <code>hookbase event-types import FILE</code>.
        </p>
      ) : (
        <table>
          <caption className="visually-hidden">Event types</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">State</th>
              <th scope="col">Version</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {types.map((type) => (
              <tr key={type.name} aria-selected={type.name === selected}>
                <td>
                  <button type="button" className="link" onClick={() => setSelected(type.name)}>
                    {type.name}
                  </button>
                </td>
                <td>{type.description}</td>
                <td>
                  {type.archived ? <Badge tone="bad">archived</Badge> : null}
                  {type.deprecated ? <Badge tone="warn">deprecated</Badge> : null}
                  {!type.archived && !type.deprecated ? <Badge tone="good">live</Badge> : null}
                </td>
                <td>{type.version}</td>
                <td>{time(type.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown ? <EventTypeDetail type={shown} /> : null}
    </section>
  );
}

function EventTypeDetail(props: { type: EventType }) {
  const { type } = props;
  const rows = schemaRows(type.schema);
  return (
    <article aria-label={`Event type ${type.name}`} className="event-type">
      <h2>{type.name}</h2>
      {type.description ? <p>{type.description}</p> : null}
      <h3>Schema</h3>
      {type.schema === null ? (
        <p>No schema: any payload conforms.</p>
      ) : (
        <>
          {rows.length > 0 ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Type</th>
                  <th scope="col">Required</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.path}>
                    <td>
                      <code>{row.path}</code>
                    </td>
                    <td>{row.type}</td>
                    <td>{row.required ? 'yes' : 'no'}</td>
                    <td>{row.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
          <details>
            <summary>JSON Schema</summary>
            <pre>{JSON.stringify(type.schema, null, 2)}</pre>
          </details>
        </>
      )}
      <h3>Example</h3>
      {type.example ? (
        <pre aria-label="Example payload">{JSON.stringify(type.example, null, 2)}</pre>
      ) : (
        <p>No example.</p>
      )}
    </article>
  );
}
