// A node:test reporter (scripts/run-tests.js adds it beside the spec reporter): at the end of a run it
// prints the slowest test files, each file's wall time from its process's start to its end, so that
// every run shows where the time goes. GATEHOUSE_TEST_TIMES_FILE=<path> also writes every file's time
// there, one "seconds<TAB>tests<TAB>failed<TAB>file" line each, slowest first.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const SHOWN = 15;

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* fileTimes(source) {
  /** @type {Map<string, { ms: number | undefined, topLevelMs: number, tests: number, failed: number }>} */
  const files = new Map();
  const entry = (file) => {
    let found = files.get(file);
    if (found === undefined) {
      found = { ms: undefined, topLevelMs: 0, tests: 0, failed: 0 };
      files.set(file, found);
    }
    return found;
  };
  for await (const event of source) {
    if (event.type !== 'test:complete' || event.data.file === undefined) continue;
    const { file, name, nesting, details } = event.data;
    const times = entry(file);
    const ms = details?.duration_ms ?? 0;
    if (nesting === 0 && name === file) {
      // The file itself: its subprocess from start to exit (node:test's process isolation).
      times.ms = ms;
      if (details?.passed === false) times.failed += times.failed === 0 ? 1 : 0;
      continue;
    }
    if (nesting === 0) times.topLevelMs += ms;
    if (details?.type !== 'suite') {
      times.tests += 1;
      if (details?.passed === false && !details?.error?.failureType?.startsWith('cancelled'))
        times.failed += 1;
    }
  }
  const rows = [...files]
    .map(([file, times]) => ({
      file: relative(process.cwd(), file),
      seconds: (times.ms ?? times.topLevelMs) / 1000,
      tests: times.tests,
      failed: times.failed,
    }))
    .sort((a, b) => b.seconds - a.seconds);
  if (rows.length === 0) return;
  const total = rows.reduce((sum, row) => sum + row.seconds, 0);
  const path = process.env.GATEHOUSE_TEST_TIMES_FILE;
  if (path) {
    writeFileSync(
      path,
      rows.map((row) => `${row.seconds.toFixed(1)}\t${row.tests}\t${row.failed}\t${row.file}\n`).join(''),
    );
  }
  const lines = [`\nslowest test files (of ${rows.length}; ${total.toFixed(0)} s summed over files):\n`];
  for (const row of rows.slice(0, SHOWN)) {
    const failed = row.failed > 0 ? `  ${row.failed} failed` : '';
    lines.push(`${row.seconds.toFixed(1).padStart(8)} s  ${row.file} (${row.tests} tests${failed})\n`);
  }
  yield lines.join('');
}
