/**
 * The SQLite purge process (started by sqlite-purge-process.ts): runs the write statements it is sent
 * on its own connection, one at a time, at nice 19.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { cpuMillisSince, lowerProcessPriority } from '../../../shared/background-process.js';
import { openSqliteConnection } from './sqlite-connection.js';
import {
  PURGE_CHECKPOINT_INTERVAL_MS,
  type PurgeProcessReply,
  type PurgeProcessRequest,
} from './sqlite-purge-process.js';

const [filename, synchronous] = process.argv.slice(2);
if (filename === undefined || (synchronous !== 'FULL' && synchronous !== 'NORMAL')) {
  process.stderr.write('usage: sqlite-purge-process-entry FILE FULL|NORMAL\n');
  process.exit(2);
}
lowerProcessPriority();
const db = openSqliteConnection(filename, synchronous);
const statements = new Map<string, BetterSqlite3.Statement>();

// The purge's deletes fill the WAL: a row and its index entries are several pages. They are
// checkpointed here, at nice 19 (see PURGE_CHECKPOINT_INTERVAL_MS). The checkpoint's CPU time goes
// with the next reply, and the purger pauses for it as for the statements.
let checkpointDue = false;
let checkpointMillis = 0;

setInterval(() => {
  if (!checkpointDue) return;
  checkpointDue = false;
  const cpu = process.cpuUsage();
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failed: the server's checkpoint thread still runs.
  }
  checkpointMillis += cpuMillisSince(cpu);
}, PURGE_CHECKPOINT_INTERVAL_MS).unref();

const reply = (message: PurgeProcessReply) => process.send?.(message);

process.on('message', (request: PurgeProcessRequest) => {
  // CPU time, not the clock: at nice 19 the statement is preempted whenever a request wants the
  // core, and that wait costs the requests nothing. Timed by the clock, a busy server made every
  // batch look slow, and the purger shrank them to 10 rows (150-350 rows/s in the purge bench).
  const cpu = process.cpuUsage();
  try {
    let statement = statements.get(request.sql);
    if (statement === undefined) statements.set(request.sql, (statement = db.prepare(request.sql)));
    const { changes } = statement.run(...request.parameters);
    if (changes > 0) checkpointDue = true;
    reply({ id: request.id, changes, millis: cpuMillisSince(cpu), checkpointMillis });
    // Reported: the next reply counts from here. An error reply carries none, so it keeps counting.
    checkpointMillis = 0;
  } catch (error) {
    reply({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// The server closed the channel (stop) or died (SIGKILL included): nothing is left to serve.
process.on('disconnect', () => {
  db.close();
  process.exit(0);
});
