import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TlsFiles {
  key: string;
  cert: string;
  certPath: string;
  generated: boolean;
}

/**
 * The configured certificate, or a self-signed development one in `<dataDir>/tls/`, created once.
 * Clients trust it with `--cacert <dataDir>/tls/cert.pem`.
 */
export async function loadTls(options: {
  dataDir: string;
  tlsCert?: string;
  tlsKey?: string;
}): Promise<TlsFiles> {
  if (options.tlsCert !== undefined || options.tlsKey !== undefined) {
    if (options.tlsCert === undefined || options.tlsKey === undefined) {
      throw new Error('--tls-cert and --tls-key go together');
    }
    return {
      cert: readFileSync(options.tlsCert, 'utf8'),
      key: readFileSync(options.tlsKey, 'utf8'),
      certPath: options.tlsCert,
      generated: false,
    };
  }
  const dir = join(options.dataDir, 'tls');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  if (existsSync(certPath) && existsSync(keyPath)) {
    return {
      cert: readFileSync(certPath, 'utf8'),
      key: readFileSync(keyPath, 'utf8'),
      certPath,
      generated: false,
    };
  }
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + 365 * 86400_000);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  mkdirSync(dir, { recursive: true });
  // Each file appears whole or not at all (written aside, then renamed), the certificate last: a process
  // starting beside this one, or a client reading cert.pem, never reads half a file.
  writeWhole(keyPath, pems.private, 0o600);
  writeWhole(certPath, pems.cert, 0o644);
  return { cert: pems.cert, key: pems.private, certPath, generated: true };
}

function writeWhole(path: string, text: string, mode: number): void {
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, text, { mode });
  renameSync(aside, path);
}
