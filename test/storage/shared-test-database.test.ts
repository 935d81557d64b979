import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { createTestStore, TEST_DATABASE_URL } from '../helpers/backends.js';

const SECONDS = 6;

/**
 * What another test file does to the shared database while this one migrates (node --test runs files
 * in parallel processes): a schema with a few tables, dropped again, in a loop, as test stores are.
 */
const OTHER_PROCESS = `
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { dropTestSchema } from ${JSON.stringify(new URL('../helpers/backends.js', import.meta.url).href)};
const until = Date.now() + ${SECONDS * 1000};
let drops = 0;
while (Date.now() < until) {
  const schema = 'o_' + randomBytes(6).toString('hex');
  const client = new pg.Client({ connectionString: process.env.GATEHOUSE_TEST_DATABASE_URL });
  await client.connect();
  await client.query('CREATE SCHEMA ' + schema);
  for (const table of ['a', 'b', 'c']) {
    await client.query('CREATE TABLE ' + schema + '.' + table + ' (id serial PRIMARY KEY, v text)');
  }
  await client.end();
  await dropTestSchema(schema);
  drops += 1;
}
process.stdout.write(String(drops));
`;

describe('test stores in the shared PostgreSQL database', { skip: TEST_DATABASE_URL === undefined }, () => {
  // Kysely's Migrator reads every schema's catalog; without the schema lock about 1 in 30 migrations
  // failed with 'schema "…" does not exist' while another process dropped its schema.
  it('migrate while another process drops its schemas, without a failure', async () => {
    const other = spawn(process.execPath, ['--input-type=module', '-e', OTHER_PROCESS], {
      // The compiled tree's root, below the repository's node_modules: where 'pg' resolves from.
      cwd: new URL('../..', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    other.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => other.once('exit', resolve));

    const until = Date.now() + SECONDS * 1000;
    const failures: string[] = [];
    let stores = 0;
    while (Date.now() < until) {
      try {
        const store = await createTestStore('postgres');
        await store.cleanup();
        stores += 1;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    assert.equal(await exited, 0);
    assert.deepEqual(failures, []);
    assert.ok(stores >= 5 && Number(output) >= 5, `${stores} stores here, ${output} drops there`);
  });
});
