import { RecentEndpointReads } from './recent-endpoint-reads';

interface Named {
  at: Date;
  name: string;
}

describe('RecentEndpointReads', () => {
  let now = 1_000_000;
  const clock = () => now;
  const readAt = (ms: number, name: string): Named => ({ at: new Date(ms), name });

  beforeEach(() => (now = 1_000_000));

  it('answers the newest read of an endpoint, whatever order they were noted in', () => {
    const recent = new RecentEndpointReads<Named>(250, clock);
    recent.note(['ep_1', 'ep_2'], readAt(now - 10, 'intake'));
    recent.note(['ep_1'], readAt(now - 50, 'older, noted later'));
    expect(recent.newest('ep_1')?.name).toBe('intake');
    expect(recent.newest('ep_2')?.name).toBe('intake');
    expect(recent.newest('ep_3')).toBeUndefined();
  });

  it('answers nothing older than its age, so the caller reads the endpoint again', () => {
    const recent = new RecentEndpointReads<Named>(250, clock);
    recent.note(['ep_1'], readAt(now, 'read'));
    now += 250;
    expect(recent.newest('ep_1')?.name).toBe('read');
    now += 1;
    expect(recent.newest('ep_1')).toBeUndefined();
  });

  it('keeps the newer of two reads across a turn of its generations', () => {
    const recent = new RecentEndpointReads<Named>(250, clock);
    now += 240;
    recent.note(['ep_1'], readAt(now, 'before the turn'));
    now += 20;
    // Started before the first one's, finished after the turn.
    recent.note(['ep_1'], readAt(now - 100, 'started earlier'));
    expect(recent.newest('ep_1')?.name).toBe('before the turn');
  });

  it('holds no read past twice its age, whatever its time says', () => {
    const recent = new RecentEndpointReads<Named>(250, clock);
    recent.note(['ep_1'], readAt(now + 10_000, 'from a clock ahead'));
    now += 260;
    expect(recent.newest('ep_1')?.name).toBe('from a clock ahead');
    recent.note(['ep_2'], readAt(now + 10_000, 'ahead too'));
    now += 260;
    expect(recent.newest('ep_1')).toBeUndefined();
    expect(recent.newest('ep_2')?.name).toBe('ahead too');
    recent.note(['ep_3'], readAt(now + 10_000, 'ahead as well'));
    // A quiet spell of more than twice the age drops both generations at once.
    now += 600;
    expect(recent.newest('ep_2')).toBeUndefined();
    expect(recent.newest('ep_3')).toBeUndefined();
  });
});
