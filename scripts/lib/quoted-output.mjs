// A tool run inside `npm test` (schemathesis in the API fuzz) prints pytest-style banners such as
// `===== 2 warnings in 27.14s =====`. CI reads a runner's closing lines to count the tests, and
// such a banner reads as pytest closing on no test at all. The tool's words are kept; only its
// banner rules change, so the run's one count stays the `tests: N passed, N failed` line.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const BANNER = /^=+ (.*\S) =+$/;

export function quoteToolLine(line) {
  const banner = BANNER.exec(line);
  return banner ? `── ${banner[1]} ──` : line;
}

// Spawns a command with its output piped through quoteToolLine and resolves with its exit code
// (or 1 when it could not start or ran past `timeoutMs`).
export function runQuoted(command, args, { cwd, env, timeoutMs, print = console.log }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      print(`✘ ${command} ran past ${timeoutMs / 1000} s: stopped`);
      child.kill('SIGKILL');
    }, timeoutMs);
    let open = 2;
    let status = null;
    const done = () => {
      if (open === 0 && status !== null) {
        clearTimeout(timer);
        resolve(status);
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      lines.on('line', (line) => print(quoteToolLine(line)));
      lines.on('close', () => {
        open--;
        done();
      });
    }
    child.on('error', (error) => {
      print(`✘ could not run ${command}: ${error.message}`);
      status = 1;
      open = 0;
      done();
    });
    child.on('close', (code) => {
      status = code ?? 1;
      done();
    });
  });
}
