#!/usr/bin/env node
// `npm run docs:settings`: writes the settings table of docs/configuration.md from the settings table
// in src/config/settings.ts (compiled first); test/settings-table.test.ts fails while the two differ.
import { writeFile } from 'node:fs/promises';
import { currentSettingsDoc, SETTINGS_DOC, withSettingsTable } from '../dist/test/helpers/settings-doc.js';

const page = await currentSettingsDoc();
const written = await withSettingsTable(page);
if (written === page) console.log(`${SETTINGS_DOC}: the settings table is current`);
else {
  await writeFile(SETTINGS_DOC, written);
  console.log(`${SETTINGS_DOC}: the settings table is written`);
}
