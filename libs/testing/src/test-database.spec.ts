import type { Client } from 'pg';
import { dropDatabase, templateLockKey, templateNameFor } from './test-database';

/** A pg client that answers each query with the next of `answers` (an error code throws). */
function scriptedClient(answers: (string | null)[]) {
  const queries: string[] = [];
  const client = {
    query: async (text: string) => {
      queries.push(text.replace(/\s+/g, ' ').trim());
      const code = answers.shift() ?? null;
      if (code) throw Object.assign(new Error(`failed with ${code}`), { code });
      return { rows: [] };
    },
  } as unknown as Client;
  return { client, queries };
}

describe('dropDatabase', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Runs `work` while the backoff timers it sets are let through. */
  async function withTimers<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await jest.advanceTimersByTimeAsync(10_000);
    const outcome = await settled;
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  it('drops with FORCE when nothing stands in the way', async () => {
    const { client, queries } = scriptedClient([null]);
    await dropDatabase(client, 'hookbase_test_x');
    expect(queries).toEqual(['DROP DATABASE IF EXISTS hookbase_test_x WITH (FORCE)']);
  });

  it('ends its own sessions and drops plainly when FORCE may not end a session', async () => {
    // 42501: an autovacuum worker, run as the superuser, is on the database.
    const { client, queries } = scriptedClient(['42501', null, '55006', null, null]);
    await withTimers(dropDatabase(client, 'hookbase_test_x'));
    expect(queries).toEqual([
      'DROP DATABASE IF EXISTS hookbase_test_x WITH (FORCE)',
      expect.stringContaining('pg_terminate_backend(pid)'),
      'DROP DATABASE IF EXISTS hookbase_test_x',
      expect.stringContaining('pg_terminate_backend(pid)'),
      'DROP DATABASE IF EXISTS hookbase_test_x',
    ]);
  });

  it('passes any other error on at once', async () => {
    const { client, queries } = scriptedClient(['3D000']);
    await expect(dropDatabase(client, 'hookbase_test_x')).rejects.toMatchObject({ code: '3D000' });
    expect(queries).toHaveLength(1);
  });

  it('gives up after ten tries', async () => {
    const { client, queries } = scriptedClient(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? null : '55006')),
    );
    await expect(withTimers(dropDatabase(client, 'hookbase_test_x'))).rejects.toMatchObject({
      code: '55006',
    });
    expect(queries.filter((q) => q.startsWith('DROP'))).toHaveLength(10);
  });
});

describe('templateNameFor', () => {
  class First {
    up() {
      return 'CREATE TABLE a ()';
    }
    down() {
      return 'DROP TABLE a';
    }
  }
  class Second {
    up() {
      return 'CREATE TABLE b ()';
    }
  }
  class SecondChanged {
    up() {
      return 'CREATE TABLE b (id int)';
    }
  }

  it('is the same for the same migrations, and a valid PostgreSQL name', () => {
    const name = templateNameFor([First, Second]);
    expect(templateNameFor([First, Second])).toBe(name);
    expect(name).toMatch(/^hookbase_test_template_[0-9a-f]{16}$/);
    expect(name.length).toBeLessThanOrEqual(63 - '_b12345678'.length);
  });

  it('changes when a migration is added, removed, reordered or its code changes', () => {
    const name = templateNameFor([First, Second]);
    // Same class name as Second, other code.
    const renamed = { name: 'Second', prototype: { up: SecondChanged.prototype.up } };
    for (const other of [
      [First],
      [First, Second, SecondChanged],
      [Second, First],
      [First, renamed],
    ]) {
      expect(templateNameFor(other)).not.toBe(name);
    }
  });
});

describe('templateLockKey', () => {
  it('is one signed 64-bit key per template name, the same every time', () => {
    const key = templateLockKey('hookbase_test_template_0123456789abcdef');
    expect(key).toBe(templateLockKey('hookbase_test_template_0123456789abcdef'));
    expect(BigInt(key) >= -(2n ** 63n) && BigInt(key) < 2n ** 63n).toBe(true);
    expect(templateLockKey('hookbase_test_template_fedcba9876543210')).not.toBe(key);
  });
});
