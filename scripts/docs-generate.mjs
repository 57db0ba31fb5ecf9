// `npm run docs:generate`: writes the documentation's generated references from the code:
// docs/reference/configuration.md from the configuration schema (libs/config) and
// docs/reference/errors.md from the error catalog (libs/domain). Rerun it after adding a
// configuration variable or an error code; unit tests fail while a page differs from the code.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from './build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

await build({ docs: false });
const { configurationReferencePage } = require(join(root, 'dist/libs/config/src/reference.js'));
const { errorReferencePage } = require(join(root, 'dist/libs/domain/src/error-reference.js'));
for (const [file, page] of [
  ['docs/reference/configuration.md', configurationReferencePage()],
  ['docs/reference/errors.md', errorReferencePage()],
]) {
  writeFileSync(join(root, file), page);
  console.log(`wrote ${file}`);
}
