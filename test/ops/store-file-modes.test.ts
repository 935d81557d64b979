import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSqlStorage, sqliteFilename } from '../../src/storage/sql/index.js';

const mode = (file: string) => statSync(file).mode & 0o777;

/** Opens the store in `dataDir`, writes through it, and returns the modes it leaves. */
async function openAndWrite(dataDir: string) {
  const storage = createSqlStorage({ databaseUrl: undefined, dataDir });
  try {
    await storage.migrate();
    await storage.throttle.hit('mode-check', 60, 1);
    const file = sqliteFilename(undefined, dataDir);
    // The -wal and -shm files exist while the connection is open.
    assert.ok(existsSync(`${file}-wal`) && existsSync(`${file}-shm`), 'WAL files present');
    return {
      dir: mode(dataDir),
      file: mode(file),
      wal: mode(`${file}-wal`),
      shm: mode(`${file}-shm`),
    };
  } finally {
    await storage.close();
  }
}

describe('the SQLite store on disk', () => {
  it('is created readable by its owner only: the directory 0700, the database and its WAL files 0600', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gatehouse-modes-'));
    const previous = process.umask(0o022);
    try {
      const modes = await openAndWrite(join(parent, 'data'));
      assert.deepEqual(modes, { dir: 0o700, file: 0o600, wal: 0o600, shm: 0o600 });
    } finally {
      process.umask(previous);
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('narrows an existing store left 0644 (and its WAL files) to 0600 when opened', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-modes-'));
    try {
      await openAndWrite(dataDir);
      const file = sqliteFilename(undefined, dataDir);
      // Closed cleanly, SQLite removed the WAL files: empty ones stand for those a crash leaves.
      for (const f of [`${file}-wal`, `${file}-shm`]) if (!existsSync(f)) writeFileSync(f, '');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) chmodSync(f, 0o644);
      const modes = await openAndWrite(dataDir);
      assert.deepEqual(
        { file: modes.file, wal: modes.wal, shm: modes.shm },
        { file: 0o600, wal: 0o600, shm: 0o600 },
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
