import { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { HookbaseProcess, logMessage } from './stack';

/** A child process stand-in whose output the test writes, chunk by chunk. */
function fakeChild() {
  const child = Object.assign(new EventEmitter(), {
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    exitCode: null,
    signalCode: null,
  });
  return child as unknown as ChildProcess & { stdout: PassThrough; stderr: PassThrough };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('logMessage', () => {
  it("is a JSON line's message, and any other line as it is", () => {
    expect(logMessage('{"level":"info","message":"listening on http://127.0.0.1:1"}')).toBe(
      'listening on http://127.0.0.1:1',
    );
    expect(logMessage('[08:00:00.000] INFO: started')).toBe('[08:00:00.000] INFO: started');
    expect(logMessage('{not json')).toBe('{not json');
    expect(logMessage('{"level":"info"}')).toBe('{"level":"info"}');
  });
});

describe('HookbaseProcess', () => {
  it('hands followers whole lines, even when a line arrives in two chunks, from both streams', async () => {
    const child = fakeChild();
    const process = new HookbaseProcess(child, {});
    child.stdout.write('first\n{"message":"sec');
    await flushed();
    const seen: string[] = [];
    expect(process.follow((line) => seen.push(line))).toEqual({ missed: 0 });
    child.stdout.write('ond"}\n');
    child.stderr.write('third\n');
    await flushed();
    expect(seen).toEqual(['first', '{"message":"second"}', 'third']);
  });

  it("finds a line by its JSON message, so a pattern never runs into the line's other fields", async () => {
    const child = fakeChild();
    const process = new HookbaseProcess(child, {});
    child.stdout.write('{"level":"info","message":"listening on http://127.0.0.1:4321"}\n');
    await flushed();
    const [, url] = await process.waitForLine(/listening on (http:\/\/\S+)/, 1_000);
    expect(url).toBe('http://127.0.0.1:4321');
  });

  it('says how many lines a late follower missed', async () => {
    const child = fakeChild();
    const process = new HookbaseProcess(child, {});
    child.stdout.write(Array.from({ length: 2_005 }, (_, i) => `line ${i}`).join('\n') + '\n');
    await flushed();
    const seen: string[] = [];
    expect(process.follow((line) => seen.push(line))).toEqual({ missed: 5 });
    expect(seen[0]).toBe('line 5');
  });
});
