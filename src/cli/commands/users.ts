import { createUser, viewUser } from '../../core/user-registry.js';
import { systemClock } from '../../shared/clock.js';
import { UsageError, isHelpFlag, parseCommandArgs, readStdin } from '../args.js';
import { printJson, type WithStorage } from '../context.js';
import { USERS_HELP } from '../help.js';

export async function runUsersCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    username: { type: 'string' },
    'password-stdin': { type: 'boolean' },
  });
  if (values.help || action === undefined || isHelpFlag(action)) {
    process.stdout.write(USERS_HELP);
    if (action === undefined) throw new UsageError('users needs an action: create, list or delete');
    return;
  }
  // Read the password before opening the store, so a slow pipe holds no database handle.
  let password: string | undefined;
  if (action === 'create') {
    if (values.username === undefined) throw new UsageError('users create needs --username');
    if (!values['password-stdin']) {
      throw new UsageError('users create reads the password from standard input: add --password-stdin');
    }
    password = await readStdin();
  }
  await withStorage(values, async (context) => {
    const { storage, json, out } = context;
    switch (action) {
      case 'create': {
        const user = await createUser(storage, systemClock, { username: values.username, password });
        if (json) printJson(context, viewUser(user));
        else out.write(`Created user ${user.username} (id ${user.id}).\n`);
        return;
      }
      case 'list': {
        const { items } = await storage.users.list(10_000, 0);
        if (json) printJson(context, items.map(viewUser));
        else {
          for (const user of items) out.write(`${user.id}  ${user.username}\n`);
          if (items.length === 0) out.write('No users.\n');
        }
        return;
      }
      case 'delete': {
        const target = values.username
          ? await storage.users.getByUsername(values.username)
          : positionals[0] !== undefined
            ? await storage.users.get(positionals[0])
            : undefined;
        if (values.username === undefined && positionals[0] === undefined) {
          throw new UsageError('users delete needs a USER_ID or --username');
        }
        if (target === undefined) throw new Error('no such user');
        await storage.users.delete(target.id);
        if (json) printJson(context, { deleted: target.id });
        else out.write(`Deleted user ${target.username} and every grant they made.\n`);
        return;
      }
      default:
        throw new UsageError(`unknown users action "${action}"`);
    }
  });
}
