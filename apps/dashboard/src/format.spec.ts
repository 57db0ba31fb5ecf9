import {
  blockedReasonText,
  duration,
  fieldOf,
  parseHeaderLines,
  fifoSwitchRule,
  parseDelays,
  percent,
  statusLabel,
} from './format';

describe('dashboard formatting', () => {
  it('shows fifo_waiting as "Queued (FIFO)"', () => {
    expect(statusLabel('fifo_waiting')).toBe('Queued (FIFO)');
    expect(statusLabel('succeeded')).toBe('Succeeded');
  });

  it('explains why a queue is blocked', () => {
    expect(blockedReasonText('retrying')).toMatch(/waits for its next attempt/);
    expect(blockedReasonText(null)).toBe('');
  });

  it('reads retry delays and refuses what is not a list of milliseconds', () => {
    expect(parseDelays('0, 5000,30000')).toEqual([0, 5000, 30000]);
    expect(parseDelays('5s')).toMatch(/whole numbers/);
    expect(parseDelays('-1')).toMatch(/whole numbers/);
  });

  it('writes durations and rates for people', () => {
    expect(duration(42)).toBe('42 s');
    expect(duration(312)).toBe('5 min 12 s');
    expect(percent(0.9876)).toBe('98.8%');
    expect(percent(null)).toBe('—');
  });
});

describe('the FIFO switch rule', () => {
  it('refuses turning FIFO on for a free plan, saying why', () => {
    const rule = fifoSwitchRule({ plan: 'free', kind: 'http', fifoEnabled: false });
    expect(rule.disabled).toBe(true);
    expect(rule.reason).toMatch(/pro or business plan/);
  });

  it('always allows turning it off, even on the free plan', () => {
    expect(fifoSwitchRule({ plan: 'free', kind: 'http', fifoEnabled: true }).disabled).toBe(false);
  });

  it('never allows it for polling endpoints, whatever the plan', () => {
    const rule = fifoSwitchRule({ plan: 'business', kind: 'polling', fifoEnabled: false });
    expect(rule.disabled).toBe(true);
    expect(rule.reason).toMatch(/Polling endpoints/);
  });

  it('allows it for a pro plan HTTP endpoint', () => {
    expect(fifoSwitchRule({ plan: 'pro', kind: 'http', fifoEnabled: false })).toEqual({
      disabled: false,
      reason: null,
    });
  });

  it('maps API issue paths to form fields', () => {
    expect(fieldOf('retry.delaysMs.2')).toBe('retry');
    expect(fieldOf('body.url')).toBe('url');
  });
});

describe('parseHeaderLines', () => {
  it('reads Name: value lines, skipping blank ones', () => {
    expect(parseHeaderLines('X-Tenant: acme\n\n  x-b :  c d ', false)).toEqual([
      { name: 'X-Tenant', value: 'acme', sensitive: false },
      { name: 'x-b', value: 'c d', sensitive: false },
    ]);
    expect(parseHeaderLines('', false)).toEqual([]);
  });

  it('lets a sensitive line keep its stored value with a name alone', () => {
    expect(parseHeaderLines('x-api-key:\nx-other: v', true)).toEqual([
      { name: 'x-api-key', sensitive: true },
      { name: 'x-other', value: 'v', sensitive: true },
    ]);
  });

  it('names the line that is not a header', () => {
    expect(parseHeaderLines('a: b\n: v', false)).toBe('Line 2: write Name: value');
    expect(parseHeaderLines('a: b\nlonely', false)).toBe('Line 2: lonely has no value');
  });
});
