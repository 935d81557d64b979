import { isValidScopeName } from '../../core/scopes.js';
import { ValidationError } from '../../core/validation.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type WithStorage } from '../context.js';
import { SCOPES_HELP } from '../help.js';

export async function runScopesCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, { description: { type: 'string' } });
  if (values.help || action === undefined || isHelpFlag(action)) {
    process.stdout.write(SCOPES_HELP);
    if (action === undefined) throw new UsageError('scopes needs an action: create, list or delete');
    return;
  }
  await withStorage(values, async (context) => {
    const { storage, json, out } = context;
    const name = positionals[0];
    switch (action) {
      case 'create': {
        if (name === undefined) throw new UsageError('scopes create needs a NAME');
        if (!isValidScopeName(name)) throw new ValidationError('name', 'not a valid scope name');
        const description = values.description ?? name;
        await storage.scopes.upsert({ name, description, createdAt: Math.floor(Date.now() / 1000) });
        if (json) printJson(context, { name, description });
        else out.write(`Scope ${name}: ${description}\n`);
        return;
      }
      case 'list': {
        const scopes = await storage.scopes.list();
        if (json)
          printJson(
            context,
            scopes.map(({ name: n, description }) => ({ name: n, description })),
          );
        else for (const scope of scopes) out.write(`${scope.name}  ${scope.description}\n`);
        return;
      }
      case 'delete': {
        if (name === undefined) throw new UsageError('scopes delete needs a NAME');
        if (!(await storage.scopes.delete(name))) throw new Error(`no scope named ${name}`);
        if (json) printJson(context, { deleted: name });
        else out.write(`Deleted scope ${name}.\n`);
        return;
      }
      default:
        throw new UsageError(`unknown scopes action "${action}"`);
    }
  });
}
