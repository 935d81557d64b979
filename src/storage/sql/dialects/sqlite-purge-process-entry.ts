/**
 * The SQLite purge process (started by sqlite-purge-process.ts): runs the write statements it is sent
 * on its own connection, one at a time, at the lowest CPU priority the system grants.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteConnection } from './sqlite-connection.js';
import type { PurgeProcessReply, PurgeProcessRequest } from './sqlite-purge-process.js';

/** Nice 19 on every thread, then SCHED_IDLE (util-linux chrt) where it is there; best effort. */
function lowerPriority(): void {
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), 19);
  } catch {
    // Not Linux: the process keeps its priority.
  }
  try {
    execFileSync('chrt', ['--all-tasks', '--idle', '--pid', '0', String(process.pid)], {
      stdio: 'ignore',
      timeout: 5000,
    });
  } catch {
    // No chrt, or refused: nice 19 stays.
  }
}

const [filename, synchronous] = process.argv.slice(2);
if (filename === undefined || (synchronous !== 'FULL' && synchronous !== 'NORMAL')) {
  process.stderr.write('usage: sqlite-purge-process-entry FILE FULL|NORMAL\n');
  process.exit(2);
}
lowerPriority();
const db = openSqliteConnection(filename, synchronous);
const statements = new Map<string, BetterSqlite3.Statement>();
const reply = (message: PurgeProcessReply) => process.send?.(message);

process.on('message', (request: PurgeProcessRequest) => {
  const started = performance.now();
  try {
    let statement = statements.get(request.sql);
    if (statement === undefined) statements.set(request.sql, (statement = db.prepare(request.sql)));
    const { changes } = statement.run(...request.parameters);
    reply({ id: request.id, changes, millis: performance.now() - started });
  } catch (error) {
    reply({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// The server closed the channel (stop) or died (SIGKILL included): nothing is left to serve.
process.on('disconnect', () => {
  db.close();
  process.exit(0);
});
