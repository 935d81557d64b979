import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { createTestStore, TEST_DATABASE_URL } from '../helpers/backends.js';

/** How many stores this side migrates and drops while the other process works beside it. */
const STORES = 8;

/**
 * What another test file does to the shared database while this one migrates (node --test runs files
 * in parallel processes): a schema with a few tables, dropped again, in a loop, as test stores are.
 * It reports each drop on a line and stops when its stdin closes: the test counts events, not time.
 */
const OTHER_PROCESS = `
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { dropTestSchema } from ${JSON.stringify(new URL('../helpers/backends.js', import.meta.url).href)};
let stop = false;
process.stdin.on('end', () => (stop = true)).resume();
while (!stop) {
  const schema = 'o_' + randomBytes(6).toString('hex');
  const client = new pg.Client({ connectionString: process.env.GATEHOUSE_TEST_DATABASE_URL });
  await client.connect();
  await client.query('CREATE SCHEMA ' + schema);
  for (const table of ['a', 'b', 'c']) {
    await client.query('CREATE TABLE ' + schema + '.' + table + ' (id serial PRIMARY KEY, v text)');
  }
  await client.end();
  await dropTestSchema(schema);
  process.stdout.write('drop\\n');
}
`;

describe('test stores in the shared PostgreSQL database', { skip: TEST_DATABASE_URL === undefined }, () => {
  // Kysely's Migrator reads every schema's catalog; without the schema lock about 1 in 30 migrations
  // failed with 'schema "…" does not exist' while another process dropped its schema.
  it('migrate while another process drops its schemas, without a failure', async () => {
    const other = spawn(process.execPath, ['--input-type=module', '-e', OTHER_PROCESS], {
      // The compiled tree's root, below the repository's node_modules: where 'pg' resolves from.
      cwd: new URL('../..', import.meta.url),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let drops = 0;
    let firstDrop: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (firstDrop = resolve));
    other.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      drops += chunk.split('\n').length - 1;
      if (drops > 0) firstDrop();
    });
    const exited = new Promise<number | null>((resolve) => other.once('exit', resolve));

    // Start once the other side is dropping, so that every store below overlaps its work.
    await started;
    const dropsBefore = drops;
    const failures: string[] = [];
    for (let stores = 0; stores < STORES; stores += 1) {
      try {
        const store = await createTestStore('postgres');
        await store.cleanup();
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    const dropsDuring = drops - dropsBefore;
    other.stdin.end();
    assert.equal(await exited, 0);
    assert.deepEqual(failures, []);
    assert.ok(dropsDuring >= 1, `the other process dropped ${dropsDuring} schemas meanwhile`);
  });
});
