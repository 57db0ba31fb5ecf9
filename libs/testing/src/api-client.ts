/* eslint-disable @typescript-eslint/no-explicit-any -- test bodies are read loosely, asserted by value */

/** A small JSON client for tests: every call returns the status and the parsed body. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    init: { rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let payload: string | undefined = init.rawBody;
    if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !headers['content-type'])
      headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // keep the text: a test asserting a JSON body will show it
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, body);
  }
  patch<T = any>(path: string, body?: unknown) {
    return this.request<T>('PATCH', path, body);
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }
}

/** Creates an organization and an API key through the admin API; returns a client for that key. */
export async function createTenant(
  baseUrl: string,
  adminToken: string,
  plan: 'free' | 'pro' | 'business' = 'free',
): Promise<{ organizationId: string; apiKey: string; client: ApiClient }> {
  const admin = new ApiClient(baseUrl, adminToken);
  const organization = await admin.post('/api/organizations', { name: `test ${plan}`, plan });
  if (organization.status !== 201) {
    throw new Error(
      `creating organization: ${organization.status} ${JSON.stringify(organization.body)}`,
    );
  }
  const organizationId: string = organization.body.data.id;
  const key = await admin.post(`/api/organizations/${organizationId}/api-keys`);
  if (key.status !== 201)
    throw new Error(`creating key: ${key.status} ${JSON.stringify(key.body)}`);
  const apiKey: string = key.body.data.key;
  return { organizationId, apiKey, client: new ApiClient(baseUrl, apiKey) };
}
