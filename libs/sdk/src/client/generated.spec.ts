import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe('generated API types', () => {
  it('match the checked-in docs/openapi.json (else: npm run sdk:generate)', () => {
    const root = join(__dirname, '..', '..', '..', '..');
    // Throws (with the script's message) when the script exits non-zero: the file is stale.
    const output = execFileSync(process.execPath, ['scripts/sdk-generate.mjs', '--check'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(output).toContain('match');
  });
});
