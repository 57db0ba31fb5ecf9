// `npm run receiver [-- --port 4000 --secret whsec_...]`: a local webhook receiver for trying
// Hookbase out. Prints each delivery; with --secret, says whether its signature verifies.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '4000' }, secret: { type: 'string' } },
});

function verify(secret, headers, body) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const content = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
  const expected = createHmac('sha256', key).update(content).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((part) => {
      const given = Buffer.from(part.replace(/^v1,/, ''), 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const signature = values.secret
      ? verify(values.secret, req.headers, body)
        ? 'signature ok'
        : 'SIGNATURE MISMATCH'
      : 'signature not checked (pass --secret)';
    console.log(
      `${new Date().toISOString()} ${req.method} ${req.url} ${req.headers['hookbase-event-type']} ` +
        `id=${req.headers['webhook-id']} attempt=${req.headers['hookbase-attempt']} ${signature}\n  ${body}`,
    );
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
}).listen(Number(values.port), '127.0.0.1', () =>
  console.log(`receiver listening on http://127.0.0.1:${values.port}`),
);
