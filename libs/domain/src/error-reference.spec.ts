import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_EXPLANATIONS, errorReferencePage } from './error-reference';
import { ERROR_STATUSES } from './error-statuses';

const PAGE = join(__dirname, '..', '..', '..', 'docs', 'reference', 'errors.md');

describe('the error reference', () => {
  it('explains every error code, with its HTTP and gRPC statuses', () => {
    expect(Object.keys(ERROR_EXPLANATIONS).sort()).toEqual(Object.keys(ERROR_STATUSES).sort());
    const page = errorReferencePage();
    for (const [code, status] of Object.entries(ERROR_STATUSES)) {
      expect(page).toContain(`| \`${code}\` | ${status.http} | \`${status.grpc}\` |`);
    }
    for (const { cause, action } of Object.values(ERROR_EXPLANATIONS)) {
      expect(cause.trim()).not.toBe('');
      expect(action.trim()).not.toBe('');
    }
  });

  it('is docs/reference/errors.md as checked in (run `npm run docs:generate` when this fails)', () => {
    expect(readFileSync(PAGE, 'utf8')).toBe(errorReferencePage());
  });
});
