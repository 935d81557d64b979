import { randomBytes } from 'node:crypto';
import { openStorage } from '../../src/compose/gatehouse.js';
import { loadConfig } from '../../src/config.js';
import { UserRegistry } from '../../src/core/users/user-registry.js';
import { systemClock } from '../../src/shared/clock.js';
import { runCli, type CliTarget } from './processes.js';

export interface BenchUser {
  username: string;
  password: string;
}

/**
 * `count` password-grant users: the first through `gatehouse users create --password-stdin`, the rest
 * through the same registry in-process (one CLI process per user would take minutes at argon2id cost).
 */
export async function createBenchUsers(target: CliTarget, count: number): Promise<BenchUser[]> {
  const users = Array.from({ length: count }, (_, i) => ({
    username: `bench-user-${i}`,
    password: randomBytes(12).toString('base64url'),
  }));
  const [first, ...rest] = users;
  runCli(target, ['users', 'create', '--username', first!.username, '--password-stdin'], first!.password);
  const storage = openStorage(loadConfig({ dataDir: target.dataDir, databaseUrl: target.databaseUrl }));
  try {
    for (const user of rest) await new UserRegistry(storage, systemClock).create(user);
  } finally {
    await storage.close();
  }
  return users;
}
