import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  ApiClient,
  emulatorAwsCredentials,
  emulatorGoogleCredentials,
  pollUntil,
  TestReceiver,
} from '@hookbase/testing';
import { CloudE2e, QUICK_RETRY, startCloudE2e } from './cloud-e2e';

/**
 * The Hookbase host's own cloud identity (here: AWS keys and a Google service account in the
 * stack's environment) is never lent to a tenant unless the operator opted its organization in,
 * and never towards an endpoint override. The AWS SDK's regional endpoints are pointed at a
 * capture server on loopback (AWS_ENDPOINT_URL), as is the Google key's token URL, so whatever
 * the host would sign with its identity lands there and nothing leaves the machine.
 */
describe('the host cloud identity', () => {
  const HOST_KEY_ID = 'AKIAHOSTIDENTITY0001';
  const capture = new TestReceiver();
  let captureUrl: string;
  let keyDir: string;
  let e2e: CloudE2e;
  let admin: ApiClient;

  /** What reached the capture server signed or asserted with the host's identity. */
  const hostSigned = () =>
    capture.requests.filter(
      (request) =>
        String(request.headers.authorization ?? '').includes(HOST_KEY_ID) ||
        request.path.startsWith('/google-token'),
    );

  const queueUrl = (account: string, name: string) =>
    `https://sqs.us-east-1.amazonaws.com/${account}/${name}`;

  async function tenantWith(hostCloudIdentity: unknown) {
    const organization = await admin.post('/api/organizations', {
      name: 'host identity',
      plan: 'pro',
      hostCloudIdentity,
    });
    expect(organization.status).toBe(201);
    const id: string = organization.body.data.id;
    const key = await admin.post(`/api/organizations/${id}/api-keys`);
    return {
      id,
      org: `/api/organizations/${id}`,
      client: new ApiClient(e2e.stack.url, key.body.data.key),
      organization: organization.body.data,
    };
  }

  async function stripCredentials(endpointId: string) {
    const db = new Client({ connectionString: e2e.stack.databaseUrl });
    await db.connect();
    try {
      // As a row saved before credentials were required would be.
      await db.query(
        `UPDATE endpoints SET config = config - 'encryptedCredentials' WHERE id = $1`,
        [endpointId],
      );
    } finally {
      await db.end();
    }
  }

  beforeAll(async () => {
    capture.respondWith(() => ({
      status: 500,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({ __type: 'InternalFailure', message: 'captured' }),
    }));
    captureUrl = await capture.start();
    keyDir = mkdtempSync(join(tmpdir(), 'hookbase-host-identity-'));
    const keyFile = join(keyDir, 'host-service-account.json');
    const google = emulatorGoogleCredentials();
    writeFileSync(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        project_id: 'hookbase-host',
        private_key_id: 'host',
        private_key: google.privateKey,
        client_email: 'host@hookbase-host.iam.gserviceaccount.com',
        token_uri: `${captureUrl}/google-token`,
      }),
    );
    e2e = await startCloudE2e({
      AWS_ACCESS_KEY_ID: HOST_KEY_ID,
      AWS_SECRET_ACCESS_KEY: 'host-secret-access-key',
      AWS_SESSION_TOKEN: 'host-session-token',
      AWS_ENDPOINT_URL: captureUrl,
      AWS_EC2_METADATA_DISABLED: 'true',
      GOOGLE_APPLICATION_CREDENTIALS: keyFile,
    });
    admin = new ApiClient(e2e.stack.url, e2e.stack.adminToken);
  });

  afterAll(async () => {
    await e2e?.stop();
    await capture.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it('is off by default: every cloud kind needs credentials, and a tenant cannot opt itself in', async () => {
    const tenant = await tenantWith(undefined);
    expect(tenant.organization.hostCloudIdentity).toBeNull();
    const configs = {
      sqs: { region: 'us-east-1', queueUrl: queueUrl('123456789012', 'orders') },
      sns: { region: 'us-east-1', topicArn: 'arn:aws:sns:us-east-1:123456789012:orders' },
      eventbridge: { region: 'us-east-1', eventBusName: 'orders' },
      s3: { region: 'us-east-1', bucket: 'orders-bucket' },
      pubsub: { projectId: 'hookbase-e2e', topic: 'orders' },
    };
    for (const [kind, config] of Object.entries(configs)) {
      const response = await tenant.client.post(`${tenant.org}/webhook-endpoints`, {
        kind,
        config,
        eventTypes: ['never.published'],
      });
      expect({ kind, status: response.status, code: response.body.error?.code }).toEqual({
        kind,
        status: 400,
        code: 'CREDENTIALS_REQUIRED',
      });
      expect(response.body.error.message).toMatch(/not allowed to use the host identity/);
    }
    const selfService = await tenant.client.patch(tenant.org, { hostCloudIdentity: {} });
    expect(selfService.status).toBe(401);
    expect((await tenant.client.get(tenant.org)).body.data.hostCloudIdentity).toBeNull();
  });

  it('once the operator opts an organization in, holds it to the listed targets and never to an override', async () => {
    const invalid = await admin.post('/api/organizations', {
      name: 'x',
      hostCloudIdentity: { awsAccountIds: ['12'] },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.code).toBe('VALIDATION_FAILED');

    const grant = { awsAccountIds: ['123456789012'], googleProjectIds: ['hookbase-e2e'] };
    const tenant = await tenantWith(grant);
    expect(tenant.organization.hostCloudIdentity).toEqual(grant);
    const create = (kind: string, config: Record<string, unknown>) =>
      tenant.client.post(`${tenant.org}/webhook-endpoints`, {
        kind,
        config,
        eventTypes: ['never.published'],
      });

    const allowed = await create('sqs', {
      region: 'us-east-1',
      queueUrl: queueUrl('123456789012', 'orders'),
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body.data.credentials).toEqual({ configured: false });
    expect((await create('pubsub', { projectId: 'hookbase-e2e', topic: 'orders' })).status).toBe(
      201,
    );
    expect(
      (
        await create('s3', {
          region: 'us-east-1',
          bucket: 'b-1',
          expectedBucketOwner: '123456789012',
        })
      ).status,
    ).toBe(201);

    for (const [kind, config, why] of [
      [
        'sqs',
        { region: 'us-east-1', queueUrl: queueUrl('999999999999', 'x') },
        /AWS account 999999999999/,
      ],
      ['s3', { region: 'us-east-1', bucket: 'b-1' }, /set expectedBucketOwner/],
      ['pubsub', { projectId: 'someone-else', topic: 'orders' }, /project someone-else/],
      [
        'sqs',
        { region: 'us-east-1', queueUrl: queueUrl('123456789012', 'x'), endpoint: captureUrl },
        /never used towards an endpoint override/,
      ],
      [
        'pubsub',
        {
          projectId: 'hookbase-e2e',
          topic: 'orders',
          endpoint: captureUrl.replace('http:', 'https:'),
        },
        /never used towards an endpoint override/,
      ],
    ] as const) {
      const refused = await create(kind, config);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'CREDENTIALS_REQUIRED',
        message: expect.stringMatching(why),
      });
    }
    expect(hostSigned()).toEqual([]);
  });

  it('signs with the host identity for an opted-in organization, and stops at the next attempt once the opt-in is withdrawn', async () => {
    const path = e2e.org;
    expect(
      (await admin.patch(path, { hostCloudIdentity: { awsRegions: ['us-east-1'] } })).status,
    ).toBe(200);
    const endpointId = await e2e.endpoint({
      kind: 'sqs',
      config: { region: 'us-east-1', queueUrl: queueUrl('123456789012', 'host-orders') },
      eventTypes: ['host.allowed'],
      retry: QUICK_RETRY,
    });
    await e2e.publish('host.allowed', { n: 1 });
    // The regional endpoint (here the capture server) gets the request, signed by the host.
    await pollUntil(() => hostSigned().length > 0, {
      description: 'a request signed with the host key at the regional endpoint',
    });

    const withdrawn = await admin.patch(path, { hostCloudIdentity: null });
    expect(withdrawn.body.data.hostCloudIdentity).toBeNull();
    const [entry] = await pollUntil(
      async () => {
        const entries = await e2e.dlqEntries(endpointId);
        return entries.length > 0 ? entries : false;
      },
      { description: 'the DLQ entry once the host identity is withdrawn' },
    );
    expect(entry.reason).toBe('permanent_failure');
    expect(entry.lastError).toMatch(/not allowed to use the host identity/);
  });

  it('dead-letters an endpoint stored without credentials towards an override, and the host identity never reaches it', async () => {
    // Opted in for everything: an override still never gets the host identity.
    expect((await admin.patch(e2e.org, { hostCloudIdentity: {} })).status).toBe(200);
    const before = hostSigned().length;
    const sqsEndpoint = await e2e.endpoint({
      kind: 'sqs',
      config: {
        region: 'us-east-1',
        queueUrl: queueUrl('123456789012', 'override'),
        endpoint: `${captureUrl}/override`,
        credentials: emulatorAwsCredentials(),
      },
      eventTypes: ['host.override'],
      retry: QUICK_RETRY,
    });
    const pubsubEndpoint = await e2e.endpoint({
      kind: 'pubsub',
      config: {
        projectId: 'hookbase-e2e',
        topic: 'override',
        endpoint: captureUrl.replace('http:', 'https:'),
        credentials: emulatorGoogleCredentials(),
      },
      eventTypes: ['host.override'],
      retry: QUICK_RETRY,
    });
    await stripCredentials(sqsEndpoint);
    await stripCredentials(pubsubEndpoint);
    for (const endpointId of [sqsEndpoint, pubsubEndpoint]) {
      const shown = (await e2e.client.get(`${e2e.org}/webhook-endpoints/${endpointId}`)).body.data;
      expect(shown.credentials).toEqual({ configured: false });
    }

    await e2e.publish('host.override', { n: 1 });
    for (const endpointId of [sqsEndpoint, pubsubEndpoint]) {
      const [entry] = await pollUntil(
        async () => {
          const entries = await e2e.dlqEntries(endpointId);
          return entries.length > 0 ? entries : false;
        },
        { description: `the DLQ entry of ${endpointId}` },
      );
      expect(entry).toMatchObject({ reason: 'permanent_failure', attempts: 1 });
      expect(entry.lastError).toMatch(/never used towards an endpoint override/);
    }
    expect(hostSigned()).toHaveLength(before);
    expect(capture.requests.filter((request) => request.path.startsWith('/override'))).toEqual([]);
  });

  it('takes no config for an http endpoint', async () => {
    const response = await e2e.client.post(`${e2e.org}/webhook-endpoints`, {
      url: `${captureUrl}/hooks`,
      config: { headers: { 'x-anything': '1' } },
      eventTypes: ['never.published'],
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { issues: [{ path: 'config.headers', message: 'http endpoints take no config' }] },
    });
  });
});
