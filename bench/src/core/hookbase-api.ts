import { ApiClient, createTenant } from '@hookbase/testing';
import { eachLimited } from './concurrency';
import { BenchStack } from './stack';

export interface Tenant {
  organizationId: string;
  apiKey: string;
  client: ApiClient;
}

export interface EndpointRequest {
  /** http endpoints (the default kind) */
  url?: string;
  /** Cloud kinds (sqs, s3, …) take a `config` instead of a url. */
  kind?: string;
  config?: Record<string, unknown>;
  eventTypes?: string[];
  channels?: string[];
  filter?: Record<string, unknown>;
  retry?: { delaysMs: number[]; maxAgeMs: number };
  fifoEnabled?: boolean;
}

/** The API said no to something the scenario needs (a feature this build does not have). */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly apiMessage: string,
  ) {
    super(`${status} ${code}: ${apiMessage}`);
  }
}

export async function createOrganization(
  stack: BenchStack,
  plan: 'free' | 'pro' | 'business',
): Promise<Tenant> {
  return createTenant(stack.apiUrl, stack.adminToken, plan);
}

export async function createEndpoint(tenant: Tenant, request: EndpointRequest): Promise<string> {
  const response = await tenant.client.post(
    `/api/organizations/${tenant.organizationId}/webhook-endpoints`,
    { eventTypes: [], ...request },
  );
  if (response.status === 201) return response.body.data.id as string;
  const error = response.body?.error ?? {};
  throw new ApiRefusal(
    response.status,
    String(error.code ?? 'UNKNOWN'),
    String(error.message ?? JSON.stringify(response.body)),
  );
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
    ids[index] = await createEndpoint(tenant, request);
    onCreated(++done);
  });
  return ids;
}
