import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { SETTINGS, type GatehouseConfig } from '../../src/config.js';

/** The page whose settings table is generated from src/config/settings.ts. */
export const SETTINGS_DOC = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));

/** The command that writes the table into the page (scripts/settings-doc.js). */
export const REGENERATE = 'npm run docs:settings';

const START = `<!-- The settings table: generated from src/config/settings.ts by \`${REGENERATE}\`; edit the table there. -->`;
const END = '<!-- End of the settings table. -->';

type Row = (typeof SETTINGS)[keyof GatehouseConfig];

function cell(markdown: string): string {
  return markdown.replaceAll('|', '\\|');
}

function code(value: string): string {
  return `\`${value}\``;
}

function defaultOf(name: string, row: Row): string {
  if (row.documented?.default !== undefined) return row.documented.default;
  if (!('default' in row))
    throw new Error(`settings table: ${name}'s derived default needs documented.default`);
  const value: unknown = row.default;
  if (value === undefined || value === '') return 'none';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
    return code(String(value));
  }
  throw new Error(`settings table: ${name}'s default needs documented.default`);
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The settings table in Markdown: the rows an operator sets, then those only code sets. */
export function settingsTable(): string {
  const operator: string[][] = [];
  const codeOnly: string[][] = [];
  for (const [name, row] of Object.entries(SETTINGS) as [keyof GatehouseConfig, Row][]) {
    if (row.variables.length === 0 && row.flag === undefined) {
      codeOnly.push([code(name), defaultOf(name, row), row.description]);
      continue;
    }
    const variables =
      row.documented?.variables ?? row.variables.map((variable) => code(variable)).join(' or ');
    const values = row.documented?.values ?? row.type?.values;
    if (values === undefined) throw new Error(`settings table: ${name} needs a type or documented.values`);
    operator.push([
      row.flag === undefined ? '' : code(`--${row.flag}`),
      row.secret ? `${variables} (secret)` : variables,
      code(name),
      values,
      defaultOf(name, row),
      row.description,
    ]);
  }
  return [
    table(['flag', 'environment', '`loadConfig`', 'values', 'default', 'meaning'], operator),
    'Settings only code sets (`loadConfig({ … })`, when Gatehouse is embedded):',
    table(['`loadConfig`', 'default', 'meaning'], codeOnly),
  ].join('\n\n');
}

/** `page` with the table between its markers written afresh, formatted as the repository formats Markdown. */
export async function withSettingsTable(page: string): Promise<string> {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`${SETTINGS_DOC} lacks the settings table's markers:\n${START}\n${END}`);
  }
  const written = `${page.slice(0, start)}${START}\n\n${settingsTable()}\n\n${page.slice(end)}`;
  const options = (await resolveConfig(SETTINGS_DOC)) ?? {};
  return format(written, { ...options, filepath: SETTINGS_DOC });
}

export async function currentSettingsDoc(): Promise<string> {
  return readFile(SETTINGS_DOC, 'utf8');
}
