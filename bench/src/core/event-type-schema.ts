import { EVENT_TYPE } from '../drivers/publisher';
import { Tenant } from './hookbase-api';

/**
 * A schema of 32 properties for the bench's event type, that every bench payload (`{ s, pad? }`)
 * satisfies: `s` required, 30 more optional properties of several kinds, so that compiling and
 * checking it costs what a real contract of a few dozen fields costs.
 */
export function benchSchema(): Record<string, unknown> {
  const kinds = [
    { type: 'string', maxLength: 200 },
    { type: 'integer', minimum: 0 },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'array', items: { type: 'string' }, maxItems: 20 },
    { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  ];
  const properties: Record<string, unknown> = {
    s: { type: 'integer', minimum: 0 },
    pad: { type: 'string' },
  };
  for (let i = 0; i < 30; i++) properties[`field${i}`] = kinds[i % kinds.length];
  return { type: 'object', required: ['s'], properties, additionalProperties: false };
}

/** Declares the bench's event type with benchSchema and sets the organization's policy. */
export async function declareValidatedBenchType(tenant: Tenant): Promise<void> {
  const org = `/api/organizations/${tenant.organizationId}`;
  const created = await tenant.client.post(`${org}/event-types`, {
    name: EVENT_TYPE,
    schema: benchSchema(),
    example: { s: 1, pad: 'x' },
  });
  if (created.status !== 201)
    throw new Error(
      `declaring the bench event type: ${created.status} ${JSON.stringify(created.body)}`,
    );
  const policy = await tenant.client.patch(`${org}/event-type-policy`, {
    eventTypePolicy: 'validated',
  });
  if (policy.status !== 200)
    throw new Error(`setting the policy: ${policy.status} ${JSON.stringify(policy.body)}`);
}
