import { initStore } from '../../compose/gatehouse.js';
import { describeStore, migrateStore } from '../../compose/store-admin.js';
import { parseCommandArgs } from '../args.js';
import { cliConfig, globalConfigInput, type Cli } from '../context.js';
import { INIT_HELP, MIGRATE_HELP } from '../help.js';

/** `gatehouse migrate`: applies pending migrations (creating the store when there is none). */
export async function runMigrateCommand(argv: string[], cli: Cli): Promise<number> {
  const { values } = parseCommandArgs(argv, {}, 'migrate', 0);
  if (values.help) {
    cli.io.stdout.write(MIGRATE_HELP);
    return 0;
  }
  const config = await cliConfig(cli, globalConfigInput(values), true);
  const applied = await migrateStore(config);
  cli.io.stdout.write(
    values.json
      ? JSON.stringify({ applied }) + '\n'
      : applied.length > 0
        ? `Applied: ${applied.join(', ')}\n`
        : 'Database schema is already current.\n',
  );
  return 0;
}

/** Creates a store: schema, secret check, built-in scopes, first signing key. Says so when it exists. */
export async function runInitCommand(argv: string[], cli: Cli): Promise<number> {
  const { values } = parseCommandArgs(argv, {}, 'init', 0);
  if (values.help) {
    cli.io.stdout.write(INIT_HELP);
    return 0;
  }
  const config = await cliConfig(cli, globalConfigInput(values), true);
  const { created, applied, kid } = await initStore(config);
  const where = describeStore(config);
  cli.io.stdout.write(
    values.json
      ? JSON.stringify({ created, store: where, applied, kid }) + '\n'
      : created
        ? `Created a Gatehouse store in ${where} (signing key ${kid}).\n`
        : `A Gatehouse store already exists in ${where}; nothing to do.\n`,
  );
  return 0;
}
