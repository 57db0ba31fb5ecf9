import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dashboardFileFor } from './dashboard-files';

describe('which dashboard file a path gets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html>');
  writeFileSync(join(dir, 'assets', 'index-abc.js'), '');

  it('serves hashed assets cached for a year', () => {
    expect(dashboardFileFor(dir, 'assets/index-abc.js')).toEqual({
      file: join(dir, 'assets', 'index-abc.js'),
      cacheControl: 'public, max-age=31536000, immutable',
    });
  });

  it('answers index.html, revalidated, for the root and for client routes', () => {
    const index = { file: join(dir, 'index.html'), cacheControl: 'no-cache' };
    expect(dashboardFileFor(dir, '')).toEqual(index);
    expect(dashboardFileFor(dir, 'endpoints/ep_123')).toEqual(index);
    expect(dashboardFileFor(dir, 'messages')).toEqual(index);
  });

  it('answers nothing for a missing asset or a path out of the folder', () => {
    expect(dashboardFileFor(dir, 'assets/gone.js')).toBeNull();
    expect(dashboardFileFor(dir, 'favicon.ico')).toBeNull();
    expect(dashboardFileFor(dir, '../../etc/passwd')).toBeNull();
    expect(dashboardFileFor(dir, '%2e%2e/%2e%2e/etc/passwd')).toBeNull();
  });
});
