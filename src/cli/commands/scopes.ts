import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type Cli } from '../context.js';
import { SCOPES_HELP } from '../help.js';

const ACTIONS: Record<string, number> = { create: 1, list: 0, delete: 1 };

export async function runScopesCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(SCOPES_HELP);
    if (action === undefined) throw new UsageError('scopes needs an action: create, list or delete');
    return;
  }
  const positionalCount = ACTIONS[action];
  if (positionalCount === undefined) throw new UsageError(`unknown scopes action "${action}"`);
  const { values, positionals } = parseCommandArgs(
    rest,
    { description: { type: 'string' } },
    `scopes ${action}`,
    positionalCount,
  );
  if (values.help) {
    cli.io.stdout.write(SCOPES_HELP);
    return;
  }
  if (values.description !== undefined && action !== 'create') {
    throw new UsageError(`scopes ${action} has no option --description`);
  }
  const name = positionals[0];
  if (positionalCount === 1 && name === undefined) throw new UsageError(`scopes ${action} needs a NAME`);
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    switch (action) {
      case 'create': {
        const scope = await engine.scopes.describe(name as string, values.description, CLI_AUDIT);
        if (json) printJson(context, { name: scope.name, description: scope.description });
        else out.write(`Scope ${scope.name}: ${scope.description}\n`);
        return;
      }
      case 'list': {
        const scopes = await engine.scopes.list();
        if (json)
          printJson(
            context,
            scopes.map(({ name: n, description }) => ({ name: n, description })),
          );
        else for (const scope of scopes) out.write(`${scope.name}  ${scope.description}\n`);
        return;
      }
      case 'delete': {
        await engine.scopes.delete(name as string, CLI_AUDIT);
        if (json) printJson(context, { deleted: name });
        else out.write(`Deleted scope ${name}.\n`);
        return;
      }
    }
  });
}
