import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  dashboardFileFor,
  DASHBOARD_CSP,
  portalOrganizationOf,
  portalPageCsp,
} from './dashboard-files';

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

describe('portal pages', () => {
  const org = 'org_01234567890123456789abcdef';

  it('are the pages under portal/<orgId>', () => {
    expect(portalOrganizationOf(`portal/${org}`)).toBe(org);
    expect(portalOrganizationOf(`portal/${org}/endpoints/ep_1`)).toBe(org);
    expect(portalOrganizationOf('portal')).toBeNull();
    expect(portalOrganizationOf(`portal/${org}x`)).toBeNull();
    expect(portalOrganizationOf('endpoints')).toBeNull();
  });

  it("are framed only by the organization's allowed origins and may show its logo", () => {
    expect(portalPageCsp(null)).toBe(DASHBOARD_CSP);
    const csp = portalPageCsp({
      allowedOrigins: ['https://app.example.com'],
      logoUrl: 'https://cdn.example.com/logo.png',
    });
    expect(csp).toContain('frame-ancestors https://app.example.com;');
    expect(csp).toContain("img-src 'self' data: https://cdn.example.com;");
    expect(csp).toContain("script-src 'self'");
  });
});
