import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config-error.js';
import { isPostgresUrl } from './value-types.js';

/** How loadConfig may come by the server secret when none is configured. */
export interface SecretOptions {
  /**
   * Generate `<data-dir>/secret` when no secret is configured and the file is missing: only for a
   * command that may create a SQLite store (serve, init, migrate). Default true.
   */
  createSecret?: boolean;
}

const SET_SECRET = 'set GATEHOUSE_SECRET or GATEHOUSE_SECRET_FILE';

export function decodeSecret(value: string, source: string): Buffer {
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length < 32) {
    throw new ConfigError(`${source}: the secret must be at least 32 bytes, base64url-encoded`);
  }
  return bytes;
}

/** A file's text without its surrounding white space; unreadable, a ConfigError naming `variable`. */
export function readSettingFile(file: string, variable: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/**
 * The secret when none is configured: generated once into the data directory of a development SQLite
 * store, readable by its owner only; never for PostgreSQL, nor where the command may not create one.
 */
export function generatedSecret(
  dataDir: string,
  databaseUrl: string | undefined,
  options: SecretOptions,
): Buffer {
  // A shared PostgreSQL store outlives any one machine's data directory: a secret generated there
  // would seal keys that no other process (nor this one, elsewhere) can open.
  if (isPostgresUrl(databaseUrl)) {
    throw new ConfigError(
      `no server secret for a PostgreSQL database: ${SET_SECRET} to the secret every process of the deployment shares (32+ random bytes, base64url)`,
    );
  }
  const file = join(dataDir, 'secret');
  if (!existsSync(file)) {
    if (options.createSecret === false) {
      throw new ConfigError(`no server secret: ${SET_SECRET} (${file} does not exist)`);
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return decodeSecret(readFileSync(file, 'utf8').trim(), file);
}
