/**
 * The floor of a command-line run that reads the store: a node process that opens the Gatehouse
 * store as every command does (createSqlStorage on the data directory or DATABASE_URL), reads one row
 * and closes it; nothing else. The cli-start scenario (scenarios/cli-start.ts) compares each command's
 * cold start with this plus `node -e 0`. Usage: node dist/bench/store-open-floor.js DATA_DIR [DATABASE_URL]
 */
import { sql } from 'kysely';
import { createSqlStorage } from '../src/storage/sql/index.js';

const [dataDir, databaseUrl] = process.argv.slice(2);
if (dataDir === undefined) {
  process.stderr.write('usage: store-open-floor DATA_DIR [DATABASE_URL]\n');
  process.exit(2);
}
const storage = createSqlStorage({ dataDir, databaseUrl });
await sql`SELECT count(*) AS n FROM clients`.execute(storage.db);
await storage.close();
