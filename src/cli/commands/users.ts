import type { User } from '../../core/model.js';
import { createUser, updateUser, validatePassword, viewUser } from '../../core/user-registry.js';
import type { Storage } from '../../core/ports.js';
import { UsageError, isHelpFlag, parseCommandArgs, readPassword } from '../args.js';
import { NotFoundError } from '../../core/validation.js';
import { printJson, type WithStorage } from '../context.js';
import { USERS_HELP } from '../help.js';

const ACTIONS: Record<string, { options: string[]; positionals: number }> = {
  create: { options: ['username', 'password-stdin'], positionals: 0 },
  list: { options: [], positionals: 0 },
  delete: { options: ['username'], positionals: 1 },
  update: { options: ['username', 'new-username'], positionals: 1 },
  'set-password': { options: ['username', 'password-stdin'], positionals: 1 },
};

/** The user a command names: USER_ID, or --username NAME. */
async function target(storage: Storage, id: string | undefined, username: string | undefined): Promise<User> {
  const user =
    id !== undefined ? await storage.users.get(id) : await storage.users.getByUsername(username as string);
  if (user === undefined) throw new NotFoundError('user', `no such user: ${id ?? username}`);
  return user;
}

export async function runUsersCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    process.stdout.write(USERS_HELP);
    if (action === undefined) {
      throw new UsageError(`users needs an action: ${Object.keys(ACTIONS).join(', ')}`);
    }
    return;
  }
  const spec = ACTIONS[action];
  if (spec === undefined) throw new UsageError(`unknown users action "${action}"`);
  const { values, positionals } = parseCommandArgs(
    rest,
    {
      username: { type: 'string' },
      'new-username': { type: 'string' },
      'password-stdin': { type: 'boolean' },
    },
    `users ${action}`,
    spec.positionals,
  );
  for (const flag of ['username', 'new-username', 'password-stdin'] as const) {
    if (values[flag] !== undefined && !spec.options.includes(flag)) {
      throw new UsageError(`users ${action} has no option --${flag}`);
    }
  }
  if (values.help) {
    process.stdout.write(USERS_HELP);
    return;
  }
  const id = positionals[0];
  // update: `users update USER_ID --username NEW`, or `users update --username NAME --new-username NEW`.
  const renameTo =
    action === 'update' && id !== undefined
      ? (values['new-username'] ?? values.username)
      : values['new-username'];
  const selector = action === 'update' && id !== undefined ? undefined : values.username;
  if (['delete', 'update', 'set-password'].includes(action)) {
    if ((id === undefined) === (selector === undefined)) {
      throw new UsageError(`users ${action} needs a USER_ID or --username NAME (one of them)`);
    }
  }
  if (action === 'update' && renameTo === undefined) {
    throw new UsageError('users update needs the new name: --new-username NEW (or USER_ID --username NEW)');
  }
  // Read the password before opening the store, so a slow pipe (or a person typing) holds no handle.
  let password: string | undefined;
  if (action === 'create' || action === 'set-password') {
    if (action === 'create' && values.username === undefined) {
      throw new UsageError('users create needs --username');
    }
    if (!values['password-stdin']) {
      throw new UsageError(`users ${action} reads the password from standard input: add --password-stdin`);
    }
    password = validatePassword(await readPassword());
  }
  await withStorage(values, async (context) => {
    const { storage, json, out, clock } = context;
    switch (action) {
      case 'create': {
        const user = await createUser(storage, clock, { username: values.username, password });
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
      case 'update': {
        const user = await updateUser(storage, clock, await target(storage, id, selector), {
          username: renameTo,
        });
        if (json) printJson(context, viewUser(user));
        else out.write(`User ${user.id} is now named ${user.username}.\n`);
        return;
      }
      case 'set-password': {
        const user = await updateUser(storage, clock, await target(storage, id, selector), { password });
        if (json) printJson(context, { ...viewUser(user), sessions_ended: true });
        else {
          out.write(
            `Changed the password of ${user.username}; their browser sessions and refresh tokens are ended.\n`,
          );
        }
        return;
      }
      case 'delete': {
        const user = await target(storage, id, selector);
        await storage.users.delete(user.id);
        if (json) printJson(context, { deleted: user.id });
        else out.write(`Deleted user ${user.username} and every grant they made.\n`);
        return;
      }
    }
  });
}
