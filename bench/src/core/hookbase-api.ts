import { ApiClient, createTenant } from '@hookbase/testing';
import { BenchStack } from './stack';
import { eachLimited } from './util';

export interface Tenant {
  organizationId: string;
  apiKey: string;
  client: ApiClient;
}

export interface EndpointRequest {
  url: string;
  retry?: { delaysMs: number[]; maxAgeMs: number };
  fifoEnabled?: boolean;
  channels?: string[];
  filter?: Record<string, unknown>;
  /** The application it belongs to (for good). */
  applicationId?: string;
}

export function createOrganization(stack: BenchStack, plan: 'free' | 'pro'): Promise<Tenant> {
  return createTenant(stack.apiUrl, stack.adminToken, plan);
}

/** Creates endpoints through the API, `concurrency` at a time; ids come back in request order. */
export async function createEndpoints(
  tenant: Tenant,
  requests: readonly EndpointRequest[],
  concurrency: number,
  onCreated: (done: number) => void = () => undefined,
): Promise<string[]> {
  const ids = new Array<string>(requests.length);
  let done = 0;
  await eachLimited(requests, concurrency, async (request, index) => {
    const { status, body } = await tenant.client.post(
      `/api/organizations/${tenant.organizationId}/webhook-endpoints`,
      { eventTypes: [], ...request },
    );
    if (status !== 201) throw new Error(`creating an endpoint: ${status} ${JSON.stringify(body)}`);
    ids[index] = body.data.id as string;
    onCreated(++done);
  });
  return ids;
}

/** Creates `count` applications of the tenant, `concurrency` at a time; ids in order. */
export async function createApplications(
  tenant: Tenant,
  count: number,
  concurrency: number,
): Promise<string[]> {
  const ids = new Array<string>(count);
  const indexes = Array.from({ length: count }, (_, i) => i);
  await eachLimited(indexes, concurrency, async (index) => {
    const { status, body } = await tenant.client.post(
      `/api/organizations/${tenant.organizationId}/applications`,
      { name: `bench application ${index}` },
    );
    if (status !== 201)
      throw new Error(`creating an application: ${status} ${JSON.stringify(body)}`);
    ids[index] = body.data.id as string;
  });
  return ids;
}
