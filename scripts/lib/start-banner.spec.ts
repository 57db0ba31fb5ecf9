import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// Plain ESM run by node (scripts/start.mjs), so it is exercised in a node process of its own.
const moduleUrl = pathToFileURL(join(__dirname, 'start-banner.mjs')).href;

function bannerFor(token: string, generated: boolean): string {
  const program =
    `import { banner } from ${JSON.stringify(moduleUrl)};\n` +
    `process.stdout.write(banner('http://127.0.0.1:3000', '127.0.0.1:50051', ${JSON.stringify(token)}, ` +
    `${generated}, { kafkaBrokers: '127.0.0.1:19092', databaseUrl: 'postgres://u:p@127.0.0.1:54329/db' }));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', program]).toString();
}

describe('the npm start banner', () => {
  it('never prints an admin token the operator supplied, and says where it comes from', () => {
    const token = 'operator-supplied-production-token-123';
    const text = bannerFor(token, false);
    expect(text).not.toContain(token);
    expect(text).toContain('from HOOKBASE_ADMIN_TOKEN (not shown)');
    expect(text).toContain('ADMIN="$HOOKBASE_ADMIN_TOKEN"');
  });

  it('prints a token it generated itself, with where it is kept', () => {
    const token = 'hbadmin_generated-token-for-this-checkout';
    const text = bannerFor(token, true);
    expect(text).toContain(`${token}   (generated, kept in .data/admin-token)`);
    expect(text).toContain(`ADMIN=${token}`);
  });

  it('hides the database password', () => {
    expect(bannerFor('hbadmin_x', true)).toContain('postgres://u:***@127.0.0.1:54329/db');
  });

  it('prints where the dashboard is', () => {
    const text = bannerFor('hbadmin_x', true);
    expect(text).toContain('Dashboard        http://127.0.0.1:3000/dashboard/');
    expect(text).toContain('Documentation    http://127.0.0.1:3000/docs/');
    expect(text).not.toContain('not built');
  });
});
