import { blockOf, blockRouter, Ledger, SEQ_BLOCK } from './ledger';

const both = new Set([0, 1]);

/** Schedules, sends and accepts events 0..n-1 addressed to `targets`. */
function publish(ledger: Ledger, n: number, targets: ReadonlySet<number> = both, start = 0) {
  for (let seq = start; seq < start + n; seq++) {
    ledger.schedule(seq, 1000 + seq, targets);
    ledger.sent(seq, 1001 + seq);
    ledger.accepted(seq, 1005 + seq, `evt_${seq}`);
  }
}

describe('Ledger', () => {
  it('balances when every published message is delivered', () => {
    const ledger = new Ledger('t');
    publish(ledger, 3);
    for (let seq = 0; seq < 3; seq++)
      for (const endpoint of both) ledger.attempt(seq, endpoint, 2000, true);
    const result = ledger.reconcile();
    expect(result.messages).toMatchObject({
      published: 6,
      delivered: 6,
      deadLettered: 0,
      missing: 0,
      duplicates: 0,
      unexpected: 0,
    });
    expect(result.balanced).toBe(true);
    expect(result.problems).toEqual([]);
    expect(ledger.isSettled()).toBe(true);
  });

  it('counts duplicates (at least once allows them) without voiding the run', () => {
    const ledger = new Ledger('t');
    publish(ledger, 1, new Set([0]));
    ledger.attempt(0, 0, 2000, true);
    ledger.attempt(0, 0, 2100, true);
    const result = ledger.reconcile();
    expect(result.messages).toMatchObject({ delivered: 1, duplicates: 1 });
    expect(result.problems).toEqual([]);
  });

  it('reports missing messages and stays unsettled', () => {
    const ledger = new Ledger('t');
    publish(ledger, 2);
    ledger.attempt(0, 0, 2000, true);
    ledger.attempt(0, 1, 2000, true);
    ledger.attempt(1, 0, 2000, false); // failed attempt: not a delivery
    const result = ledger.reconcile();
    expect(result.messages).toMatchObject({
      published: 4,
      delivered: 2,
      missing: 2,
      failedAttempts: 1,
    });
    expect(result.balanced).toBe(true);
    expect(result.problems).toEqual([
      '2 published messages were neither delivered nor dead-lettered',
    ]);
    expect(ledger.isSettled()).toBe(false);
  });

  it('counts dead-lettered messages; one also delivered counts once, as delivered', () => {
    const ledger = new Ledger('t');
    publish(ledger, 2);
    ledger.attempt(0, 0, 2000, true);
    ledger.attempt(0, 1, 2000, true);
    ledger.attempt(1, 0, 2000, true);
    ledger.deadLettered('evt_1', 1);
    ledger.deadLettered('evt_1', 1); // a DLQ record read twice is one dead letter
    ledger.deadLettered('evt_0', 0); // delivered and dead-lettered (e.g. a timeout that landed)
    const result = ledger.reconcile();
    expect(result.messages).toMatchObject({
      published: 4,
      delivered: 3,
      deadLettered: 1,
      missing: 0,
      deliveredAndDeadLettered: 1,
    });
    expect(result.balanced).toBe(true);
    expect(ledger.isSettled()).toBe(true);
  });

  it('does not balance when a message arrives for an event whose publish failed', () => {
    const ledger = new Ledger('t');
    publish(ledger, 1, new Set([0]));
    ledger.schedule(1, 1000, new Set([0]));
    ledger.sent(1, 1001);
    ledger.failed(1, 1200, 'timeout');
    ledger.attempt(0, 0, 2000, true);
    ledger.attempt(1, 0, 2000, true); // ingest had accepted it after all
    const result = ledger.reconcile();
    expect(result.messages).toMatchObject({ published: 1, delivered: 2, unexpected: 1 });
    expect(result.balanced).toBe(false);
    expect(result.problems[0]).toMatch(/does not balance: published 1 ≠ delivered 2/);
    expect(result.events.failed).toBe(1);
  });

  it('does not balance when a message reaches an endpoint it was not addressed to', () => {
    const ledger = new Ledger('t');
    publish(ledger, 1, new Set([0]));
    ledger.attempt(0, 0, 2000, true);
    ledger.attempt(0, 5, 2000, true);
    expect(ledger.reconcile().balanced).toBe(false);
  });

  it('flags a dead letter for an unknown event', () => {
    const ledger = new Ledger('t');
    publish(ledger, 1, new Set([0]));
    ledger.attempt(0, 0, 2000, true);
    ledger.deadLettered('evt_other', 0);
    const result = ledger.reconcile();
    expect(result.messages.unexpected).toBe(1);
    expect(result.balanced).toBe(false);
  });

  it('does not publish refused events and groups refusals by reason', () => {
    const ledger = new Ledger('t');
    publish(ledger, 1);
    for (const seq of [1, 2, 3]) {
      ledger.schedule(seq, 1000, both);
      ledger.sent(seq, 1000);
      ledger.refused(seq, 1001, seq === 3 ? 'HTTP 429' : 'HTTP 503');
    }
    for (const endpoint of both) ledger.attempt(0, endpoint, 2000, true);
    const result = ledger.reconcile();
    expect(result.events).toMatchObject({ scheduled: 4, sent: 4, accepted: 1, refused: 3 });
    expect(result.refusals).toEqual({ 'HTTP 503': 2, 'HTTP 429': 1 });
    expect(result.messages.published).toBe(2);
    expect(ledger.isSettled()).toBe(true);
  });

  it('is unsettled while a publish is unanswered, and says so at the end', () => {
    const ledger = new Ledger('t');
    ledger.schedule(0, 1000, both);
    ledger.sent(0, 1000);
    expect(ledger.isSettled()).toBe(false);
    expect(ledger.reconcile().problems).toEqual(['1 publishes were never answered']);
  });

  it('measures latency from the scheduled time, so a late sender shows', () => {
    const ledger = new Ledger('t');
    ledger.schedule(0, 1000, new Set([3]));
    ledger.sent(0, 1400); // the generator fell 400 ms behind
    ledger.accepted(0, 1410, 'evt_0');
    ledger.attempt(0, 3, 1450, false);
    ledger.attempt(0, 3, 1500, true);
    expect(ledger.deliveries()).toEqual([
      {
        seq: 0,
        endpoint: 3,
        scheduledAt: 1000,
        sentAt: 1400,
        deliveredAt: 1500,
        attempts: 2,
      },
    ]);
  });

  it('records first deliveries per endpoint in arrival order when tracking order', () => {
    const ledger = new Ledger('t', { trackOrder: true });
    publish(ledger, 3, new Set([0]));
    ledger.attempt(1, 0, 2000, true);
    ledger.attempt(0, 0, 2001, true);
    ledger.attempt(1, 0, 2002, true); // duplicate: not a new arrival
    ledger.attempt(2, 0, 2003, true);
    expect(ledger.arrivals().get(0)).toEqual([1, 0, 2]);
  });

  it('refuses impossible bookkeeping', () => {
    const ledger = new Ledger('t');
    ledger.schedule(0, 1, both);
    expect(() => ledger.schedule(0, 1, both)).toThrow(/twice/);
    expect(() => ledger.accepted(0, 2, 'evt')).toThrow(/never sent/);
    expect(() => ledger.sent(9, 2)).toThrow(/never scheduled/);
    expect(() => ledger.schedule(1, 1, new Set([2 ** 20]))).toThrow(/out of range/);
  });

  it('keeps live progress counts', () => {
    const ledger = new Ledger('t');
    publish(ledger, 2);
    ledger.attempt(0, 0, 2000, true);
    ledger.deadLettered('evt_1', 1);
    expect(ledger.progress).toMatchObject({
      scheduled: 2,
      accepted: 2,
      expected: 4,
      delivered: 1,
      deadLettered: 1,
    });
  });
});

describe('blockRouter', () => {
  it('finds the block from the sequence number; the warm-up belongs to none', () => {
    expect(blockOf(0)).toBe(0);
    expect(blockOf(SEQ_BLOCK - 1)).toBe(0);
    expect(blockOf(2 * SEQ_BLOCK + 5)).toBe(2);
    expect(blockOf(-1)).toBe(-1);
  });

  it("counts each delivery in its block's ledger and ignores the warm-up's", () => {
    const ledgers = [new Ledger('a'), new Ledger('b')];
    const targets = new Set([0]);
    ledgers[1].schedule(4 * SEQ_BLOCK, 0, targets);
    ledgers[1].sent(4 * SEQ_BLOCK, 1);
    ledgers[1].accepted(4 * SEQ_BLOCK, 2, 'evt_b');
    const router = blockRouter(ledgers, 3);
    router.attempt(4 * SEQ_BLOCK, 0, 3, true);
    router.attempt(-1, 0, 3, true);
    expect(ledgers[1].progress.delivered).toBe(1);
    expect(ledgers[0].progress.attempts).toBe(0);
    router.deadLettered('evt_b', 0);
    expect(ledgers[1].progress.deadLettered).toBe(1);
  });
});
