import { PendingOffsets, SpreadPicker } from './fanout-offsets';

describe('PendingOffsets', () => {
  it('hands back each record once the committed offset is past it', () => {
    const pending = new PendingOffsets();
    pending.add(0, 10, [
      { seq: 1, eventId: 'evt_1' },
      { seq: 2, eventId: 'evt_2' },
      { seq: 3, eventId: 'evt_3' },
    ]);
    pending.add(1, 0, [{ seq: 4, eventId: 'evt_4' }]);
    pending.add(0, 13, [{ seq: 5, eventId: 'evt_5' }]);
    expect(pending.size).toBe(5);
    // The committed offset is the next to read: 12 means 10 and 11 are done.
    expect(pending.passed(0, 12).map((r) => [r.seq, r.offset])).toEqual([
      [1, 10],
      [2, 11],
    ]);
    expect(pending.passed(0, 12)).toEqual([]);
    expect(pending.passed(2, 100)).toEqual([]);
    expect(pending.passed(0, 14).map((r) => r.eventId)).toEqual(['evt_3', 'evt_5']);
    expect(pending.passed(1, 1).map((r) => r.seq)).toEqual([4]);
    expect(pending.size).toBe(0);
  });

  it('refuses offsets out of order (a second send in flight would cause them)', () => {
    const pending = new PendingOffsets();
    pending.add(0, 5, [{ seq: 1, eventId: 'evt_1' }]);
    expect(() => pending.add(0, 5, [{ seq: 2, eventId: 'evt_2' }])).toThrow(/after 5/);
  });
});

describe('SpreadPicker', () => {
  it('keeps candidates until each partition has its share', () => {
    const picker = new SpreadPicker(3, 3);
    expect([0, 0, 2, 2, 1].map((p) => picker.offer(p))).toEqual([true, false, true, false, true]);
    expect(picker).toMatchObject({ done: true, kept: 3, covered: 3 });
    expect(picker.offer(1)).toBe(false);
  });

  it('allows several per partition when more are wanted than there are partitions', () => {
    const picker = new SpreadPicker(2, 3);
    expect([0, 0, 0, 1].map((p) => picker.offer(p))).toEqual([true, true, false, true]);
    expect(picker.done).toBe(true);
    expect(new SpreadPicker(6, 2).covered).toBe(0);
  });
});
