import type { EndpointRepository, OperationalOutboxRepository } from '@hookbase/persistence';
import type { EventEnvelope } from '@hookbase/domain';
import { OperationalEventPublisher } from './operational-events.publisher';
import type { OperationalOutboxRelay } from './operational-outbox.relay';

describe('OperationalEventPublisher', () => {
  function setup() {
    const reads: string[] = [];
    const written: EventEnvelope[] = [];
    const endpoints = {
      operationalEndpoints: async (organizationId: string) => {
        reads.push(organizationId);
        return [{ id: `op_${organizationId}`, status: 'active', eventTypes: [], deleted: false }];
      },
    } as unknown as EndpointRepository;
    const outbox = {
      add: async (envelopes: EventEnvelope[]) => {
        written.push(...envelopes);
      },
    } as unknown as OperationalOutboxRepository;
    const relay = { nudge: () => undefined } as unknown as OperationalOutboxRelay;
    return { publisher: new OperationalEventPublisher(endpoints, outbox, relay), reads, written };
  }

  it("reads an organization's operational endpoints once for events told together", async () => {
    const { publisher, reads, written } = setup();
    await Promise.all([
      ...Array.from({ length: 30 }, (_, i) =>
        publisher.emit('message.attempt.exhausted', { id: `ep_${i}`, organizationId: 'org_a' }),
      ),
      publisher.emit('message.attempt.exhausted', { id: 'ep_b', organizationId: 'org_b' }),
    ]);
    expect(reads.sort()).toEqual(['org_a', 'org_b']);
    // Every event is still told, each to its organization's operational endpoint.
    expect(written).toHaveLength(31);
    expect(new Set(written.map((e) => e.endpointIds?.join()))).toEqual(
      new Set(['op_org_a', 'op_org_b']),
    );
  });

  it('reads again for events told later: a new operational endpoint is seen', async () => {
    const { publisher, reads } = setup();
    await publisher.emit('message.attempt.exhausted', { id: 'ep_1', organizationId: 'org_a' });
    await publisher.emit('message.attempt.exhausted', { id: 'ep_2', organizationId: 'org_a' });
    expect(reads).toEqual(['org_a', 'org_a']);
  });
});
