import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM material for TLS receivers in tests, made with the system's openssl (Debian's package). */
export interface TlsFixtures {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A certificate for 127.0.0.1 signed by itself, and its key. */
  selfSignedCert: string;
  selfSignedKey: string;
}

export function makeTlsFixtures(): TlsFixtures {
  const dir = mkdtempSync(join(tmpdir(), 'hookbase-tls-'));
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '1',
      '-subj',
      '/CN=Hookbase Test CA',
    );
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'self.key',
      '-out',
      'self.crt',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    );
    for (const [name, cn] of [
      ['server', '127.0.0.1'],
      ['client', 'hookbase-client'],
    ]) {
      openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
      );
    }
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    return {
      caCert: read('ca.crt'),
      serverCert: read('server.crt'),
      serverKey: read('server.key'),
      clientCert: read('client.crt'),
      clientKey: read('client.key'),
      selfSignedCert: read('self.crt'),
      selfSignedKey: read('self.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
