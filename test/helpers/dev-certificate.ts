import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTls } from '../../src/compose/dev-certificate.js';

/** The development certificate of this test process, made once by the server's own loadTls. */
let made: Promise<{ key: string; cert: string }> | undefined;

/**
 * This test process's development certificate (localhost, 127.0.0.1, ::1), the same for every server
 * a test starts with it: one `ca` trusts them all.
 */
export function testCertificate(): Promise<{ key: string; cert: string }> {
  made ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-tls-'));
    try {
      const { key, cert } = await loadTls({ dataDir: dir });
      return { key, cert };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return made;
}

/**
 * Puts this process's development certificate where a server started on `dataDir` without a configured
 * certificate looks first (`<dataDir>/tls/`, compose/dev-certificate.ts), with the modes loadTls gives
 * them: the server then loads it instead of making one at each start. A certificate already there stays.
 */
export async function seedDevCertificate(dataDir: string): Promise<void> {
  const dir = join(dataDir, 'tls');
  if (existsSync(join(dir, 'cert.pem')) || existsSync(join(dir, 'key.pem'))) return;
  const { key, cert } = await testCertificate();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'key.pem'), key, { mode: 0o600, flag: 'wx' });
  writeFileSync(join(dir, 'cert.pem'), cert, { flag: 'wx' });
}
