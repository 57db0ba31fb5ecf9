import { matchRecipients, RecipientCandidate } from './recipients';

const endpoint = (id: string, overrides: Partial<RecipientCandidate> = {}): RecipientCandidate => ({
  id,
  status: 'active',
  eventTypes: [],
  deleted: false,
  ...overrides,
});

describe('matchRecipients', () => {
  it('sends every type to endpoints with no filter and only listed types to the others', () => {
    const all = endpoint('all');
    const orders = endpoint('orders', { eventTypes: ['order.created', 'order.updated'] });
    const users = endpoint('users', { eventTypes: ['user.created'] });
    expect(matchRecipients([all, orders, users], { eventType: 'order.created' })).toEqual([
      all,
      orders,
    ]);
  });

  it('includes paused endpoints and leaves out disabled and deleted ones', () => {
    const paused = endpoint('paused', { status: 'paused' });
    const disabled = endpoint('disabled', { status: 'disabled' });
    const deleted = endpoint('deleted', { deleted: true });
    expect(matchRecipients([paused, disabled, deleted], { eventType: 'x' })).toEqual([paused]);
  });

  it('narrows to the endpoint ids given with the event, still applying the other rules', () => {
    const a = endpoint('a');
    const b = endpoint('b');
    const c = endpoint('c', { eventTypes: ['other'] });
    expect(matchRecipients([a, b, c], { eventType: 'x', endpointIds: ['b', 'c'] })).toEqual([b]);
  });

  it('resolves to nobody when nothing subscribes', () => {
    expect(matchRecipients([], { eventType: 'x' })).toEqual([]);
  });
});
