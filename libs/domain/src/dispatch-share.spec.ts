import { DispatchShares, organizationShareSlots } from './dispatch-share';
import { DomainError } from './errors';

/** Requests `count` slots for `org`, tickets named `<org><n>`; returns those granted at once. */
function ask(shares: DispatchShares<string>, org: string, count: number, from = 1): string[] {
  const granted: string[] = [];
  for (let n = from; n < from + count; n++)
    if (shares.request(org, `${org}${n}`)) granted.push(`${org}${n}`);
  return granted;
}

describe('DispatchShares', () => {
  it('grants an organization its share, then lets it borrow only while a whole share stays free', () => {
    const shares = new DispatchShares<string>(10, 3);
    expect(ask(shares, 'a', 9)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']);
    expect(shares.inUse('a')).toBe(7);
    expect(shares.waitingCount('a')).toBe(2);
    // The three free slots are anyone else's share.
    expect(ask(shares, 'b', 4)).toEqual(['b1', 'b2', 'b3']);
    expect(shares.inUse()).toBe(10);
    expect(shares.waitingCount()).toBe(3);
  });

  it('gives a freed slot to the waiting organization holding the fewest', () => {
    const shares = new DispatchShares<string>(6, 3);
    ask(shares, 'a', 3);
    ask(shares, 'b', 1);
    ask(shares, 'c', 2);
    expect(ask(shares, 'c', 1, 3)).toEqual([]);
    expect(ask(shares, 'b', 1, 2)).toEqual([]);
    expect(ask(shares, 'a', 1, 4)).toEqual([]);
    // Whoever frees the slot: b holds 1, a and c 2 after a's release.
    expect(shares.release('a')).toEqual(['b2']);
    // a now holds the fewest (1); c waited longer but holds 2.
    expect(shares.release('a')).toEqual(['a4']);
    expect(shares.release('b')).toEqual(['c3']);
  });

  it('breaks ties between organizations holding as many by who has waited longest', () => {
    const shares = new DispatchShares<string>(4, 2);
    ask(shares, 'a', 1);
    ask(shares, 'b', 1);
    ask(shares, 'c', 2);
    expect(ask(shares, 'b', 1, 2)).toEqual([]);
    expect(ask(shares, 'a', 1, 2)).toEqual([]);
    expect(shares.release('c')).toEqual(['b2']);
    expect(shares.release('c')).toEqual(['a2']);
  });

  it('lets a freed slot go to no one rather than to an organization past its share', () => {
    const shares = new DispatchShares<string>(10, 3);
    ask(shares, 'a', 7);
    ask(shares, 'b', 3);
    expect(ask(shares, 'a', 2, 8)).toEqual([]); // a8, a9 wait
    expect(ask(shares, 'c', 3)).toEqual([]); // nothing free
    expect(shares.release('a')).toEqual(['c1']);
    expect(shares.release('a')).toEqual(['c2']); // a 5, b 3, c 2
    expect(shares.release('b')).toEqual(['c3']); // a 5, b 2, c 3
    expect(shares.release('c')).toEqual([]); // 1 free: a may not borrow it
    expect(shares.release('a')).toEqual([]); // a 4, 2 free
    expect(shares.release('a')).toEqual([]); // a 3, 3 free: one share, not more
    expect(shares.release('b')).toEqual(['a8']); // 4 free: a borrows one
    expect(shares.waitingCount('a')).toBe(1);
    expect(shares.inUse()).toBe(7);
  });

  it('keeps each organization’s requests in arrival order', () => {
    const shares = new DispatchShares<string>(2, 1);
    expect(ask(shares, 'a', 5)).toEqual(['a1']);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push(...shares.release('a'));
    expect(order).toEqual(['a2', 'a3', 'a4', 'a5']);
    expect(shares.release('a')).toEqual([]);
    expect(shares.inUse()).toBe(0);
  });

  it('lets a borrower in again only once more than a share is free', () => {
    const shares = new DispatchShares<string>(6, 2);
    ask(shares, 'a', 4);
    expect(ask(shares, 'a', 1, 5)).toEqual([]); // 2 free = one share: a may not take it
    expect(ask(shares, 'b', 1)).toEqual(['b1']); // but b may (below its share)
    expect(shares.release('b')).toEqual([]); // 2 free again: still not more than a share
    expect(shares.release('a')).toEqual(['a5']); // 3 free: a borrows one
    expect(shares.inUse('a')).toBe(4);
  });

  it('with a share as large as the pool is a plain pool that serves the least-served first', () => {
    const shares = new DispatchShares<string>(3, 3);
    expect(ask(shares, 'a', 4)).toEqual(['a1', 'a2', 'a3']);
    expect(ask(shares, 'b', 1)).toEqual([]);
    expect(shares.release('a')).toEqual(['b1']);
    expect(shares.release('a')).toEqual(['a4']);
  });

  it('a share of one in a pool of one is a mutex', () => {
    const shares = new DispatchShares<string>(1, 1);
    expect(ask(shares, 'a', 1)).toEqual(['a1']);
    expect(ask(shares, 'b', 1)).toEqual([]);
    expect(shares.release('a')).toEqual(['b1']);
    expect(shares.release('b')).toEqual([]);
  });

  it('withdraws a waiting ticket without letting anyone in, and only once', () => {
    const shares = new DispatchShares<string>(2, 1);
    ask(shares, 'a', 3);
    ask(shares, 'b', 1); // b1 takes the share kept free
    expect(shares.waitingCount('a')).toBe(2); // a2, a3: a holds its share of one
    expect(shares.withdraw('a', 'a2')).toBe(true);
    expect(shares.withdraw('a', 'a2')).toBe(false);
    expect(shares.withdraw('a', 'a1')).toBe(false); // granted, not waiting
    expect(shares.withdraw('c', 'c1')).toBe(false); // unknown organization
    expect(shares.waitingCount()).toBe(1);
    expect(shares.release('b')).toEqual([]); // 1 free = a share: a may not borrow it
    expect(shares.release('a')).toEqual(['a3']);
    expect(shares.withdraw('a', 'a3')).toBe(false);
    expect(shares.waitingCount()).toBe(0);
  });

  it('keeps the others in arrival order when tickets in the middle withdraw', () => {
    const shares = new DispatchShares<string>(1, 1);
    ask(shares, 'a', 6); // a1 holds the slot; a2..a6 wait
    expect(shares.withdraw('a', 'a3')).toBe(true);
    expect(shares.withdraw('a', 'a5')).toBe(true);
    const order: string[] = [];
    while (shares.waitingCount() > 0) order.push(...shares.release('a'));
    expect(order).toEqual(['a2', 'a4', 'a6']);
  });

  it('serves thousands of waiting tickets in arrival order while most of them give up, front, middle or behind a front that does not move', () => {
    const shares = new DispatchShares<string>(1, 1);
    ask(shares, 'a', 5_001); // a1 holds the slot; a2..a5001 wait
    // Behind a front that does not move: all but every tenth give up.
    for (let n = 3; n <= 5_001; n++)
      if (n % 10 !== 0) expect(shares.withdraw('a', `a${n}`)).toBe(true);
    expect(shares.waitingCount('a')).toBe(1 + 500);
    // A ticket withdrawn earlier cannot come back as granted, nor be withdrawn twice.
    expect(shares.withdraw('a', 'a3')).toBe(false);
    ask(shares, 'a', 3, 6_000); // a6000..a6002 wait behind them
    const order: string[] = [];
    for (let granted = 0; shares.waitingCount() > 0; granted++) {
      order.push(...shares.release('a'));
      // Now and then the ticket at the front gives up instead.
      if (granted % 100 === 50) {
        const front = `a${(granted + 5) * 10}`;
        if (shares.withdraw('a', front)) order.push(`withdrew ${front}`);
      }
    }
    const expected = ['a2'];
    for (let n = 10; n <= 5_000; n += 10) expected.push(`a${n}`);
    expected.push('a6000', 'a6001', 'a6002');
    const served = order.filter((entry) => !entry.startsWith('withdrew'));
    const withdrawn = order.filter((entry) => entry.startsWith('withdrew')).map((e) => e.slice(9));
    expect(withdrawn.length).toBeGreaterThan(0);
    expect(served).toEqual(expected.filter((ticket) => !withdrawn.includes(ticket)));
  });

  it('refuses a ticket that already waits', () => {
    const shares = new DispatchShares<string>(1, 1);
    ask(shares, 'a', 2);
    expect(() => shares.request('a', 'a2')).toThrow(/already waits/);
    expect(shares.waitingCount('a')).toBe(1);
  });

  it('refuses to release a slot an organization does not hold', () => {
    const shares = new DispatchShares<string>(2, 1);
    expect(() => shares.release('a')).toThrow(DomainError);
    ask(shares, 'a', 1);
    shares.release('a');
    expect(() => shares.release('a')).toThrow(/holds no dispatch slot/);
  });

  it.each([
    [0, 1],
    [1.5, 1],
    [4, 0],
    [4, 5],
    [4, 2.5],
    [Number.NaN, 1],
  ])('refuses capacity %p with share %p', (capacity, share) => {
    expect(() => new DispatchShares(capacity, share)).toThrow(DomainError);
  });

  it('holds its rules through any sequence of requests, releases and withdrawals', () => {
    // A small deterministic generator: the same sequence on every run.
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) as number;
    const orgs = ['a', 'b', 'c', 'd'];
    // Collected rather than asserted one by one: thousands of expect calls are slow.
    const violations: string[] = [];
    const check = (ok: boolean, step: number, rule: string) => {
      if (!ok && violations.length < 10) violations.push(`step ${step}: ${rule}`);
    };
    for (const [capacity, share] of [
      [1, 1],
      [5, 1],
      [8, 2],
      [10, 5],
      [7, 7],
    ]) {
      const shares = new DispatchShares<number>(capacity, share);
      const holders: string[] = [];
      const waiting = new Map<number, string>();
      let next = 0;
      const granted = (tickets: number[]) =>
        tickets.forEach((ticket) => {
          holders.push(waiting.get(ticket)!);
          waiting.delete(ticket);
        });
      for (let step = 0; step < 1_500; step++) {
        const roll = random();
        const org = orgs[Math.floor(random() * orgs.length)];
        if (roll < 0.5) {
          const ticket = next++;
          const free = capacity - shares.inUse();
          const allowedNow = free > 0 && (shares.inUse(org) < share || free > share);
          const hadQueue = shares.waitingCount(org) > 0;
          const got = shares.request(org, ticket);
          check(got === (allowedNow && !hadQueue), step, 'granted at once exactly when allowed');
          if (got) holders.push(org);
          else waiting.set(ticket, org);
        } else if (roll < 0.9 && holders.length > 0) {
          const [holder] = holders.splice(Math.floor(random() * holders.length), 1);
          const before = new Map(orgs.map((o) => [o, shares.inUse(o)]));
          const released = shares.release(holder);
          check(released.length <= 1, step, 'one freed slot lets in at most one');
          if (released.length === 1) {
            // The one let in was among the least-holding organizations that were waiting.
            const winner = waiting.get(released[0])!;
            const held = before.get(winner)! - (winner === holder ? 1 : 0);
            const freeBefore = capacity - shares.inUse() + 1;
            // It was allowed: below its share, or borrowing with a whole share left free.
            check(held < share || freeBefore - 1 >= share, step, 'a borrower leaves a share free');
            for (const [, other] of waiting) {
              const otherHeld = before.get(other)! - (other === holder ? 1 : 0);
              if (otherHeld < share || freeBefore > share)
                check(held <= otherHeld, step, 'the slot went to one holding the fewest');
            }
          }
          granted(released);
        } else if (waiting.size > 0) {
          const tickets = [...waiting.keys()];
          const ticket = tickets[Math.floor(random() * tickets.length)];
          check(shares.withdraw(waiting.get(ticket)!, ticket), step, 'a waiting ticket withdraws');
          waiting.delete(ticket);
        }
        // The rules after every step.
        check(shares.inUse() === holders.length, step, 'slots in use are counted');
        check(shares.inUse() <= capacity, step, 'never beyond capacity');
        check(shares.waitingCount() === waiting.size, step, 'waiting tickets are counted');
        const free = capacity - shares.inUse();
        for (const o of orgs) {
          const count = holders.filter((h) => h === o).length;
          check(shares.inUse(o) === count, step, 'slots per organization are counted');
          // Nobody waits who could go, so a slot is never left idle for nothing.
          if (shares.waitingCount(o) > 0)
            check(!(free > 0 && (count < share || free > share)), step, 'nobody waits who may go');
        }
      }
    }
    expect(violations).toEqual([]);
  });
});

describe('organizationShareSlots', () => {
  it.each([
    [256, 25, 64],
    [256, 100, 256],
    [10, 25, 2],
    [3, 25, 1],
    [1, 1, 1],
    [1_000, 33, 330],
  ])('pool %p at %p %% is %p slots', (capacity, percent, slots) => {
    expect(organizationShareSlots(capacity, percent)).toBe(slots);
  });
});
