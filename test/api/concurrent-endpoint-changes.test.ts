import { createTenant, RunningStack, startStack } from '@hookbase/testing';

/**
 * Endpoint changes write their operational events in the change's own transaction. Many at once
 * in one organization, more than the pool has connections, must all succeed: a transaction that
 * waited for a second connection (to read the operational recipients) once held the whole pool
 * and answered 500 after the pool's timeout.
 */
describe('concurrent endpoint changes', () => {
  let stack: RunningStack;

  beforeAll(async () => {
    stack = await startStack({ DATABASE_POOL_SIZE: '4' });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('creates and deletes 24 endpoints at once with a pool of 4', async () => {
    const { client, organizationId } = await createTenant(stack.url, stack.adminToken);
    const org = `/api/organizations/${organizationId}`;
    await client.post(`${org}/operational-webhook-endpoints`, {
      url: 'https://ops.example.com/hooks',
    });
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        client.post(`${org}/webhook-endpoints`, { url: `https://example.com/hooks/${i}` }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(24).fill(201));
    const deleted = await Promise.all(
      created.map((r) => client.delete(`${org}/webhook-endpoints/${r.body.data.id}`)),
    );
    expect(deleted.map((r) => r.status).every((s) => s === 200 || s === 204)).toBe(true);
  });
});
