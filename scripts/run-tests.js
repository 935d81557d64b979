#!/usr/bin/env node
// Runs every compiled test file with node:test. Parts that need something a fresh machine may lack
// say so in one line and are skipped; CI provides them all (see .ci/run).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

// `--folders unit,storage,package`: the files under those folders of dist/test (or the top-level
// `NAME.test.js`); otherwise the files named, or every test file.
function partsOfSuite(names) {
  return names.flatMap((name) => {
    const folder = join('dist/test', name);
    if (existsSync(folder) && statSync(folder).isDirectory()) return testFiles(folder).sort();
    if (existsSync(`${folder}.test.js`)) return [`${folder}.test.js`];
    console.error(`run-tests: no folder or file dist/test/${name}(.test.js); build first (npx tsc -b)`);
    process.exit(2);
  });
}

const args = process.argv.slice(2);
const foldersAt = args.indexOf('--folders');
const requested =
  foldersAt === -1
    ? args
    : [...args.slice(0, foldersAt), ...partsOfSuite((args[foldersAt + 1] ?? '').split(','))];
const files = requested.length > 0 ? requested : testFiles('dist/test').sort();
if (!process.env.GATEHOUSE_TEST_DATABASE_URL) {
  console.log(
    'notice: PostgreSQL tests skipped; set GATEHOUSE_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run them',
  );
}
if (!existsSync(process.env.GATEHOUSE_CHROMIUM ?? '/usr/bin/chromium')) {
  console.log(
    'notice: browser tests skipped; install Debian chromium (apt-get install chromium) to run them',
  );
}
// Files run three at a time on the 2-core machines CI uses: a file often waits (on Chromium, on
// PostgreSQL, on a child process), and with two at a time the cores stood idle a third of the run.
// GATEHOUSE_TEST_CONCURRENCY sets another number (1 to debug one file's output in order).
const concurrency = Number(process.env.GATEHOUSE_TEST_CONCURRENCY ?? 3);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error('run-tests: GATEHOUSE_TEST_CONCURRENCY must be a whole number of at least 1');
  process.exit(2);
}
// The spec output, then the slowest files (scripts/file-times.js), both on stdout.
const fileTimes = fileURLToPath(new URL('file-times.js', import.meta.url));
const result = spawnSync(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${fileTimes}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
