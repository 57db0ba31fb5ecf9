import { OffsetWatermark, windowRoom } from './offset-watermark';

/** A small seeded PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The obvious model: every offset read, which are finished, and the lowest that is not. */
class ReferenceWatermark {
  private readonly read: bigint[] = [];
  private readonly known = new Set<bigint>();
  private readonly done = new Set<bigint>();
  private low = 0;

  add(offset: bigint): void {
    this.read.push(offset);
    this.known.add(offset);
  }

  finish(offset: bigint): void {
    if (this.known.has(offset)) this.done.add(offset);
    while (this.low < this.read.length && this.done.has(this.read[this.low])) this.low++;
  }

  get unfinished(): number {
    return this.read.length - this.done.size;
  }

  committable(): string | null {
    if (this.read.length === 0) return null;
    if (this.low < this.read.length) return this.read[this.low].toString();
    return (this.read[this.read.length - 1] + 1n).toString();
  }
}

function watermarkOf(...offsets: Array<string | number>): OffsetWatermark {
  const watermark = new OffsetWatermark();
  offsets.forEach((offset) => watermark.add(String(offset)));
  return watermark;
}

describe('OffsetWatermark', () => {
  it('has nothing to commit and nothing unfinished before anything is read', () => {
    const watermark = new OffsetWatermark();
    expect(watermark.committable()).toBeNull();
    expect(watermark.unfinished).toBe(0);
  });

  it('commits a single read offset only once it is finished, then the next one', () => {
    const watermark = watermarkOf(42);
    expect(watermark.committable()).toBe('42');
    expect(watermark.unfinished).toBe(1);
    watermark.finish('42');
    expect(watermark.committable()).toBe('43');
    expect(watermark.unfinished).toBe(0);
  });

  it('moves one past each offset finished in order', () => {
    const watermark = watermarkOf(0, 1, 2, 3, 4);
    expect(watermark.committable()).toBe('0');
    const seen: Array<[string | null, number]> = [];
    for (let offset = 0; offset < 5; offset++) {
      watermark.finish(String(offset));
      seen.push([watermark.committable(), watermark.unfinished]);
    }
    expect(seen).toEqual([
      ['1', 4],
      ['2', 3],
      ['3', 2],
      ['4', 1],
      ['5', 0],
    ]);
  });

  it('stays at the lowest unfinished offset when later ones finish first', () => {
    const watermark = watermarkOf(10, 11, 12, 13, 14);
    const steps: Array<[string, string | null, number]> = [];
    for (const offset of ['12', '11', '14', '10', '13']) {
      watermark.finish(offset);
      steps.push([offset, watermark.committable(), watermark.unfinished]);
    }
    expect(steps).toEqual([
      ['12', '10', 4],
      ['11', '10', 3],
      ['14', '10', 2],
      ['10', '13', 1],
      ['13', '15', 0],
    ]);
  });

  it('follows the offsets actually read when they have gaps (compacted topics, transactions)', () => {
    const watermark = watermarkOf(5, 9, 20);
    watermark.finish('5');
    expect(watermark.committable()).toBe('9');
    watermark.finish('20');
    expect(watermark.committable()).toBe('9');
    expect(watermark.unfinished).toBe(1);
    watermark.finish('9');
    expect(watermark.committable()).toBe('21');
    expect(watermark.unfinished).toBe(0);
  });

  it('goes on from where it was when more offsets are read after all finished', () => {
    const watermark = watermarkOf(0, 1);
    watermark.finish('1');
    watermark.finish('0');
    expect(watermark.committable()).toBe('2');
    watermark.add('2');
    watermark.add('3');
    expect(watermark.committable()).toBe('2');
    expect(watermark.unfinished).toBe(2);
    watermark.finish('3');
    expect(watermark.committable()).toBe('2');
    watermark.finish('2');
    expect(watermark.committable()).toBe('4');
  });

  it('counts an offset finished twice (still above the watermark) once', () => {
    const watermark = watermarkOf(1, 2, 3);
    watermark.finish('2');
    watermark.finish('2');
    expect(watermark.unfinished).toBe(2);
    expect(watermark.committable()).toBe('1');
    watermark.finish('1');
    expect(watermark.committable()).toBe('3');
    expect(watermark.unfinished).toBe(1);
  });

  describe('offsets beyond 2^53', () => {
    it('keeps every digit, as strings', () => {
      // 2^53 = 9007199254740992: as numbers, ...993 would round to ...992 and ...994 would collide.
      const watermark = watermarkOf('9007199254740993', '9007199254740994', '9007199254740995');
      expect(watermark.committable()).toBe('9007199254740993');
      watermark.finish('9007199254740994');
      expect(watermark.committable()).toBe('9007199254740993');
      watermark.finish('9007199254740993');
      expect(watermark.committable()).toBe('9007199254740995');
      expect(watermark.unfinished).toBe(1);
      watermark.finish('9007199254740995');
      expect(watermark.committable()).toBe('9007199254740996');
    });

    it('reaches the largest Kafka offset', () => {
      const watermark = watermarkOf('9223372036854775805', '9223372036854775806');
      watermark.finish('9223372036854775806');
      expect(watermark.committable()).toBe('9223372036854775805');
      watermark.finish('9223372036854775805');
      expect(watermark.committable()).toBe('9223372036854775807');
    });

    it('refuses a repeat that only differs beyond double precision', () => {
      const watermark = watermarkOf('9007199254740993');
      expect(() => watermark.add('9007199254740993')).toThrow(/must increase/);
      expect(() => watermark.add('9007199254740992')).toThrow(/must increase/);
      watermark.add('9007199254740994');
      expect(watermark.unfinished).toBe(2);
    });
  });

  describe('adding an offset that does not increase', () => {
    it.each([
      ['the same offset', '7'],
      ['a lower offset', '3'],
      ['zero', '0'],
    ])('throws for %s, naming both offsets', (_label, offset) => {
      const watermark = watermarkOf(5, 7);
      expect(() => watermark.add(offset)).toThrow(
        new Error(`offset ${offset} added after 7: offsets must increase`),
      );
    });

    it('leaves the watermark as it was', () => {
      const watermark = watermarkOf(5, 7);
      watermark.finish('7');
      expect(() => watermark.add('6')).toThrow();
      expect(watermark.committable()).toBe('5');
      expect(watermark.unfinished).toBe(1);
      watermark.finish('5');
      expect(watermark.committable()).toBe('8');
      watermark.add('8');
      expect(watermark.committable()).toBe('8');
    });

    it('throws after everything read is finished too', () => {
      const watermark = watermarkOf(5);
      watermark.finish('5');
      expect(() => watermark.add('5')).toThrow(/must increase/);
      expect(watermark.committable()).toBe('6');
    });

    it('compares offsets as numbers, not as text', () => {
      const watermark = watermarkOf(9);
      expect(() => watermark.add('10')).not.toThrow();
      expect(() => watermark.add('9')).toThrow(/offset 9 added after 10/);
      expect(watermark.committable()).toBe('9');
    });
  });

  describe('finishing an offset below the watermark', () => {
    it('is ignored while later offsets are unfinished', () => {
      const watermark = watermarkOf(1, 2, 3);
      watermark.finish('1');
      watermark.finish('1');
      watermark.finish('0');
      expect(watermark.committable()).toBe('2');
      expect(watermark.unfinished).toBe(2);
      watermark.finish('2');
      watermark.finish('3');
      expect(watermark.committable()).toBe('4');
      expect(watermark.unfinished).toBe(0);
    });

    it('is ignored once everything read is finished', () => {
      const watermark = watermarkOf(1, 2, 3);
      ['1', '2', '3'].forEach((offset) => watermark.finish(offset));
      watermark.finish('3'); // a late duplicate completion
      watermark.finish('0'); // older than anything read
      expect(watermark.committable()).toBe('4');
      expect(watermark.unfinished).toBe(0);
      // The count must stay exact afterwards too: callers bound their window with it.
      watermark.add('4');
      watermark.add('5');
      expect(watermark.unfinished).toBe(2);
      watermark.finish('4');
      expect(watermark.unfinished).toBe(1);
      expect(watermark.committable()).toBe('5');
    });
  });

  describe('long runs against a reference model', () => {
    it('reports the lowest unfinished offset after each of 10,000 shuffled finishes', () => {
      const random = prng(20260101);
      const base = 2n ** 53n - 5_000n; // crosses 2^53 half way
      const offsets = Array.from({ length: 10_000 }, (_, i) => base + BigInt(i));
      const watermark = new OffsetWatermark();
      const reference = new ReferenceWatermark();
      for (const offset of offsets) {
        watermark.add(offset.toString());
        reference.add(offset);
      }
      expect(watermark.unfinished).toBe(10_000);
      expect(watermark.committable()).toBe(base.toString());

      const mismatches: string[] = [];
      shuffle(offsets, random).forEach((offset, i) => {
        watermark.finish(offset.toString());
        reference.finish(offset);
        const got = [watermark.committable(), watermark.unfinished];
        const want = [reference.committable(), reference.unfinished];
        if (got[0] !== want[0] || got[1] !== want[1]) {
          mismatches.push(`step ${i} (finish ${offset}): got ${got}, want ${want}`);
        }
      });
      expect(mismatches.slice(0, 5)).toEqual([]);
      expect(watermark.committable()).toBe((base + 10_000n).toString());
      expect(watermark.unfinished).toBe(0);
    });

    it.each([1, 7, 99])(
      'matches the model while reading and finishing interleave, with gaps (seed %i)',
      (seed) => {
        const random = prng(seed);
        const watermark = new OffsetWatermark();
        const reference = new ReferenceWatermark();
        const pending: bigint[] = [];
        const finished: bigint[] = [];
        let next = 1_000n;
        let steps = 0;
        const mismatches: string[] = [];
        const check = (what: string) => {
          steps++;
          const got = [watermark.committable(), watermark.unfinished];
          const want = [reference.committable(), reference.unfinished];
          if (got[0] !== want[0] || got[1] !== want[1]) {
            mismatches.push(`${what}: got ${got}, want ${want}`);
          }
        };
        while (next < 40_000n) {
          // Read a batch, offsets with occasional gaps, while the window allows it.
          if (pending.length < 400 && random() < 0.3) {
            const size = 1 + Math.floor(random() * 50);
            for (let i = 0; i < size; i++) {
              next += random() < 0.1 ? BigInt(2 + Math.floor(random() * 5)) : 1n;
              watermark.add(next.toString());
              reference.add(next);
              pending.push(next);
            }
            check(`read up to ${next}`);
            continue;
          }
          if (pending.length === 0) continue;
          // Finish a random unfinished one, older ones a little more likely.
          const pick = Math.floor(random() ** 1.5 * pending.length);
          const [offset] = pending.splice(pick, 1);
          watermark.finish(offset.toString());
          reference.finish(offset);
          finished.push(offset);
          check(`finish ${offset}`);
          // A late duplicate of a completion, while something is still unfinished.
          if (pending.length > 0 && random() < 0.05) {
            const again = finished[Math.floor(random() * finished.length)];
            watermark.finish(again.toString());
            reference.finish(again);
            check(`finish ${again} again`);
          }
        }
        for (const offset of shuffle(pending, random)) {
          watermark.finish(offset.toString());
          reference.finish(offset);
          check(`drain ${offset}`);
        }
        expect(steps).toBeGreaterThan(10_000);
        expect(mismatches.slice(0, 5)).toEqual([]);
        expect(watermark.unfinished).toBe(0);
        expect(watermark.committable()).toBe((next + 1n).toString());
      },
    );

    it('recovers after one slow offset holds the watermark for 5,000 others', () => {
      const watermark = new OffsetWatermark();
      for (let offset = 0; offset <= 5_000; offset++) watermark.add(String(offset));
      for (let offset = 1; offset <= 5_000; offset++) {
        watermark.finish(String(offset));
        expect(watermark.committable()).toBe('0');
      }
      expect(watermark.unfinished).toBe(1);
      watermark.finish('0');
      expect(watermark.committable()).toBe('5001');
      expect(watermark.unfinished).toBe(0);
      for (let offset = 5_001; offset <= 7_000; offset++) watermark.add(String(offset));
      watermark.finish('6000');
      expect(watermark.committable()).toBe('5001');
      for (let offset = 5_001; offset < 6_000; offset++) watermark.finish(String(offset));
      expect(watermark.committable()).toBe('6001');
      expect(watermark.unfinished).toBe(1_000);
    });

    it('keeps its memory bounded on a long-lived partition (white box)', () => {
      // The class's own storage, looked at directly: a partition that reads for days must not
      // keep every offset it ever read.
      const watermark = new OffsetWatermark();
      const internals = watermark as unknown as { order: unknown[]; open: Set<unknown> };
      const random = prng(42);
      const window: number[] = [];
      let largest = 0;
      for (let offset = 0; offset < 100_000; offset++) {
        watermark.add(String(offset));
        window.push(offset);
        if (window.length > 100) {
          const [done] = window.splice(Math.floor(random() * window.length), 1);
          watermark.finish(String(done));
        }
        largest = Math.max(largest, internals.order.length);
      }
      expect(largest).toBeLessThan(2_500);
      expect(internals.open.size).toBeLessThan(2_500);
      expect(watermark.unfinished).toBe(100);
      expect(watermark.committable()).toBe(String(Math.min(...window)));
    });
  });
});

describe('windowRoom', () => {
  it('gives the whole room once a quarter of the window is free', () => {
    expect(windowRoom(0, 1000)).toBe(1000);
    expect(windowRoom(750, 1000)).toBe(250);
    expect(windowRoom(7, 10)).toBe(3);
  });

  it('gives none while less than a quarter is free, so a full window is not read a record at a time', () => {
    expect(windowRoom(751, 1000)).toBe(0);
    expect(windowRoom(999, 1000)).toBe(0);
    expect(windowRoom(1000, 1000)).toBe(0);
    expect(windowRoom(8, 10)).toBe(0);
  });

  it('never gives room past the window, however far it is overfull', () => {
    expect(windowRoom(1200, 1000)).toBe(0);
  });

  it('gives a window of one its record once it is empty', () => {
    expect(windowRoom(0, 1)).toBe(1);
    expect(windowRoom(1, 1)).toBe(0);
  });
});
