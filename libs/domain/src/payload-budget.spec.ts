import { DomainError } from './errors';
import { PayloadBudget } from './payload-budget';

const read = (name: string, bytes: number) => ({ payload: { name }, bytes });

describe('PayloadBudget', () => {
  it('holds payloads while they fit the budget, and lets a message go without one that does not', () => {
    const budget = new PayloadBudget<{ name: string }>(100);
    expect(budget.hold('evt_a', read('a', 60))).toEqual({ name: 'a' });
    expect(budget.room()).toBe(40);
    expect(budget.hold('evt_b', read('b', 41))).toBeUndefined();
    expect(budget.holds('evt_b')).toBe(false);
    expect(budget.hold('evt_c', read('c', 40))).toEqual({ name: 'c' });
    expect(budget.heldBytes).toBe(100);
    expect(budget.room()).toBe(0);
    expect(budget.hold('evt_d', read('d', 0))).toEqual({ name: 'd' });
    expect(budget.heldEvents).toBe(3);
  });

  it("counts an event's payload once, shares it with its other messages and keeps it until the last lets go", () => {
    const budget = new PayloadBudget<{ name: string }>(100);
    const first = budget.hold('evt_a', read('a', 90));
    // A second read of the same event (another intake) shares the payload held, even over budget.
    const second = budget.hold('evt_a', read('a again', 90));
    const third = budget.hold('evt_a');
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(budget.heldBytes).toBe(90);
    budget.release('evt_a');
    budget.release('evt_a');
    expect(budget.holds('evt_a')).toBe(true);
    expect(budget.heldBytes).toBe(90);
    budget.release('evt_a');
    expect(budget.holds('evt_a')).toBe(false);
    expect(budget.heldBytes).toBe(0);
    expect(budget.room()).toBe(100);
  });

  it('holds nothing without a read, and nothing larger than the whole budget', () => {
    const budget = new PayloadBudget<string>(10);
    expect(budget.hold('evt_a')).toBeUndefined();
    expect(budget.hold('evt_b', { payload: 'b', bytes: 11 })).toBeUndefined();
    expect(budget.heldEvents).toBe(0);
    const none = new PayloadBudget<string>(0);
    expect(none.hold('evt_a', { payload: 'a', bytes: 1 })).toBeUndefined();
    expect(none.hold('evt_b', { payload: 'b', bytes: 0 })).toBe('b');
  });

  it('refuses a release of a payload not held, and a budget that is not a whole number of bytes', () => {
    const budget = new PayloadBudget<string>(10);
    expect(() => budget.release('evt_a')).toThrow(DomainError);
    budget.hold('evt_a', { payload: 'a', bytes: 5 });
    budget.release('evt_a');
    expect(() => budget.release('evt_a')).toThrow(DomainError);
    expect(() => new PayloadBudget(-1)).toThrow(DomainError);
    expect(() => new PayloadBudget(1.5)).toThrow(DomainError);
  });

  it('keeps its count equal to the payloads held and within the budget over a long random sequence', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const budget = new PayloadBudget<number>(1_000);
    const sizes = new Map<string, number>();
    const holders = new Map<string, number>();
    for (let step = 0; step < 5_000; step++) {
      const eventId = `evt_${Math.floor(random() * 40)}`;
      const size = sizes.get(eventId) ?? Math.floor(random() * 300);
      sizes.set(eventId, size);
      if (random() < 0.55) {
        const wasHeld = budget.holds(eventId);
        const fits = budget.heldBytes + size <= 1_000;
        const got = budget.hold(
          eventId,
          random() < 0.9 ? { payload: size, bytes: size } : undefined,
        );
        if (wasHeld) expect(got).toBe(size);
        if (!wasHeld && !fits) expect(got).toBeUndefined();
        if (got !== undefined) holders.set(eventId, (holders.get(eventId) ?? 0) + 1);
      } else if ((holders.get(eventId) ?? 0) > 0) {
        budget.release(eventId);
        holders.set(eventId, holders.get(eventId)! - 1);
      }
      const held = [...holders].filter(([, count]) => count > 0);
      const bytes = held.reduce((sum, [id]) => sum + sizes.get(id)!, 0);
      if (budget.heldEvents !== held.length || budget.heldBytes !== bytes || bytes > 1_000)
        throw new Error(
          `step ${step}: ${budget.heldEvents} events, ${budget.heldBytes} bytes held`,
        );
      if (!held.every(([id]) => budget.holds(id))) throw new Error(`step ${step}: one not held`);
    }
  });
});
