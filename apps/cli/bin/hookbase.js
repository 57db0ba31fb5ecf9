#!/usr/bin/env node
// The `hookbase` command: runs the CLI built into dist/ by `npm run build`.
const { join } = require('node:path');

let cli;
try {
  cli = require(join(__dirname, '..', '..', '..', 'dist', 'apps', 'cli', 'src', 'main.js'));
} catch (error) {
  if (error && error.code === 'MODULE_NOT_FOUND' && /dist[\\/]apps[\\/]cli/.test(error.message)) {
    process.stderr.write('hookbase: the CLI is not built yet: run `npm run build` first\n');
    process.exit(3);
  }
  throw error;
}
cli.main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
