import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import type { Engine } from '../../core/engine.js';
import type { User } from '../../core/model.js';
import { viewUserSummary, type UserSummary } from '../../core/sign-in/account-security.js';
import { validatePassword, viewUser } from '../../core/users/user-registry.js';
import { UsageError, isHelpFlag, parseCommandArgs, readPassword } from '../args.js';
import { notFound, printJson, type Cli } from '../context.js';
import { USERS_HELP } from '../help.js';

const ACTIONS: Record<string, { options: string[]; positionals: number }> = {
  create: { options: ['username', 'password-stdin', 'email', 'name', 'admin'], positionals: 0 },
  list: { options: [], positionals: 0 },
  show: { options: ['username'], positionals: 1 },
  delete: { options: ['username'], positionals: 1 },
  update: {
    options: ['username', 'new-username', 'email', 'name', 'admin', 'no-admin', 'disabled', 'enabled'],
    positionals: 1,
  },
  'set-password': { options: ['username', 'password-stdin'], positionals: 1 },
  'reset-mfa': { options: ['username'], positionals: 1 },
  links: { options: ['username'], positionals: 1 },
  unlink: { options: ['username'], positionals: 2 },
};

/** The user a command names: USER_ID, or --username NAME. */
function target(engine: Engine, id: string | undefined, username: string | undefined): Promise<User> {
  return id !== undefined ? engine.users.require(id) : engine.users.requireByUsername(username as string);
}

export async function runUsersCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(USERS_HELP);
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
      email: { type: 'string' },
      name: { type: 'string' },
      admin: { type: 'boolean' },
      'no-admin': { type: 'boolean' },
      disabled: { type: 'boolean' },
      enabled: { type: 'boolean' },
    },
    `users ${action}`,
    spec.positionals,
  );
  for (const flag of [
    'username',
    'new-username',
    'password-stdin',
    'email',
    'name',
    'admin',
    'no-admin',
    'disabled',
    'enabled',
  ] as const) {
    if (values[flag] !== undefined && !spec.options.includes(flag)) {
      throw new UsageError(`users ${action} has no option --${flag}`);
    }
  }
  if (values.help) {
    cli.io.stdout.write(USERS_HELP);
    return;
  }
  // unlink: `users unlink USER_ID LINK_ID`, or `users unlink --username NAME LINK_ID`.
  const [id, linkId] =
    action === 'unlink' && values.username !== undefined && positionals.length < 2
      ? [undefined, positionals[0]]
      : [positionals[0], positionals[1]];
  if (action === 'unlink' && linkId === undefined) {
    throw new UsageError('users unlink needs a LINK_ID (gatehouse users links USER shows them)');
  }
  // update: `users update USER_ID --username NEW`, or `users update --username NAME --new-username NEW`.
  const renameTo =
    action === 'update' && id !== undefined
      ? (values['new-username'] ?? values.username)
      : values['new-username'];
  const selector = action === 'update' && id !== undefined ? undefined : values.username;
  if (['delete', 'update', 'set-password', 'reset-mfa', 'show', 'links', 'unlink'].includes(action)) {
    if ((id === undefined) === (selector === undefined)) {
      throw new UsageError(`users ${action} needs a USER_ID or --username NAME (one of them)`);
    }
  }
  // Decision 29: --admin gives the administrator role, --no-admin takes it away.
  if (values.admin && values['no-admin']) throw new UsageError('give --admin or --no-admin, not both');
  const admin = values.admin ? true : values['no-admin'] ? false : undefined;
  // Decision 37: --disabled stops every sign-in of the user (and ends what they had open); --enabled
  // lets them sign in again.
  if (values.disabled && values.enabled) throw new UsageError('give --disabled or --enabled, not both');
  const disabled = values.disabled ? true : values.enabled ? false : undefined;
  if (
    action === 'update' &&
    renameTo === undefined &&
    values.email === undefined &&
    values.name === undefined &&
    admin === undefined &&
    disabled === undefined
  ) {
    throw new UsageError(
      'users update needs something to change: --new-username NEW (or USER_ID --username NEW), --email, ' +
        '--name, --admin or --no-admin, --disabled or --enabled',
    );
  }
  // OpenID Connect claims (Core §5.1); '' removes them.
  const claims = { email: values.email, name: values.name };
  // Read the password before opening the store, so a slow pipe (or a person typing) holds no handle.
  let password: string | undefined;
  if (action === 'create' || action === 'set-password') {
    if (action === 'create' && values.username === undefined) {
      throw new UsageError('users create needs --username');
    }
    if (!values['password-stdin']) {
      throw new UsageError(`users ${action} reads the password from standard input: add --password-stdin`);
    }
    password = validatePassword(await readPassword(cli.io));
  }
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    switch (action) {
      case 'create': {
        const user = await engine.users.create(
          { username: values.username, password, ...claims, admin },
          CLI_AUDIT,
        );
        if (json) printJson(context, viewUser(user));
        else {
          const role = user.admin ? ', an administrator' : '';
          out.write(`Created user ${user.username} (id ${user.id})${role}.\n`);
        }
        return;
      }
      case 'list': {
        const { items } = await engine.users.list(10_000, 0);
        if (json) printJson(context, items.map(viewUser));
        else {
          for (const user of items) {
            const marks = `${user.admin ? '  admin' : ''}${user.disabled ? '  disabled' : ''}`;
            out.write(`${user.id}  ${user.username}${marks}\n`);
          }
          if (items.length === 0) out.write('No users.\n');
        }
        return;
      }
      case 'show': {
        const summary = await engine.account.summary(await target(engine, id, selector));
        if (json) printJson(context, viewUserSummary(summary));
        else out.write(describeUserSummary(summary));
        return;
      }
      case 'update': {
        const user = await engine.users.update(
          await target(engine, id, selector),
          { username: renameTo, ...claims, admin, disabled },
          CLI_AUDIT,
        );
        if (json) printJson(context, viewUser(user));
        else if (renameTo !== undefined) out.write(`User ${user.id} is now named ${user.username}.\n`);
        else if (disabled !== undefined) {
          out.write(
            disabled
              ? `User ${user.username} (id ${user.id}) is disabled: they cannot sign in, and their browser ` +
                  'sessions and refresh tokens are ended.\n'
              : `User ${user.username} (id ${user.id}) is enabled: they can sign in again.\n`,
          );
        } else if (admin !== undefined) {
          out.write(
            `User ${user.username} (id ${user.id}) ${admin ? 'is now an administrator' : 'is no longer an administrator'}.\n`,
          );
        } else out.write(`Updated user ${user.username} (id ${user.id}).\n`);
        return;
      }
      case 'set-password': {
        const user = await engine.users.update(await target(engine, id, selector), { password }, CLI_AUDIT);
        if (json) printJson(context, { ...viewUser(user), sessions_ended: true });
        else {
          out.write(
            `Changed the password of ${user.username}; their browser sessions and refresh tokens are ended.\n`,
          );
        }
        return;
      }
      case 'reset-mfa': {
        // Decision 34: for a user who lost their phone and their recovery codes. Their sessions are
        // left alone; the next sign-in is with the password alone (or sets an app up, when required).
        // PASSKEY HELPER: remove the user's passkeys here too, if a reset should take them.
        const user = await target(engine, id, selector);
        const removed = await engine.secondFactors.reset(user.id, CLI_AUDIT);
        if (json) {
          printJson(context, {
            user: user.id,
            authenticator_app_removed: removed.totp,
            recovery_codes_removed: removed.recoveryCodes,
          });
        } else {
          out.write(
            `Removed the second factors of ${user.username}: ${removed.totp ? 'the authenticator app' : 'no authenticator app'} and ${removed.recoveryCodes} recovery code(s).\n`,
          );
        }
        return;
      }
      case 'links': {
        // Decision 39: the user's links to upstream identity providers, as an operator sees them.
        const user = await target(engine, id, selector);
        const links = await engine.identityProviders.links(user.id);
        if (json) printJson(context, links);
        else if (links.length === 0) out.write(`${user.username} has no linked accounts.\n`);
        else {
          out.write(`Linked accounts of ${user.username} (id ${user.id}):\n`);
          for (const link of links) {
            const used = link.last_used_at === null ? 'never used' : `last used ${link.last_used_at}`;
            out.write(
              `  ${link.id}  ${link.provider_name} (${link.provider_id})  subject ${link.subject}` +
                `${link.label === null ? '' : `  ${link.label}`}  linked ${link.created_at}, ${used}\n`,
            );
          }
        }
        return;
      }
      case 'unlink': {
        const user = await target(engine, id, selector);
        const link = (await engine.identityProviders.links(user.id)).find((each) => each.id === linkId);
        if (link === undefined || !(await engine.identityProviders.removeLink(user.id, link.id))) {
          throw notFound(`link ${linkId} of user ${user.username} (gatehouse users links shows them)`);
        }
        if (json) printJson(context, { user: user.id, unlinked: link.id });
        else {
          out.write(
            `Removed the link of ${user.username} to ${link.provider_name} (subject ${link.subject}): ` +
              'they no longer sign in through that account.\n',
          );
        }
        return;
      }
      case 'delete': {
        const user = await target(engine, id, selector);
        await engine.users.delete(user.id, CLI_AUDIT);
        if (json) printJson(context, { deleted: user.id });
        else out.write(`Deleted user ${user.username} and every grant they made.\n`);
        return;
      }
    }
  });
}

/** `users show` for people (decision 37): who, their state, their ways of signing in; never a secret. */
function describeUserSummary({ user, methods, sessions }: UserSummary): string {
  const lines = [
    `User ${user.username} (id ${user.id})`,
    `  email:            ${user.email ?? '(none)'}`,
    `  name:             ${user.name ?? '(none)'}`,
    `  administrator:    ${user.admin ? 'yes' : 'no'}`,
    `  disabled:         ${user.disabled ? 'yes: cannot sign in' : 'no'}`,
    `  browser sessions: ${sessions}`,
    '  signs in with:',
    ...(methods.length === 0
      ? ['    (nothing)']
      : methods.map((line) => `    ${line.method}: ${line.description}`)),
  ];
  return `${lines.join('\n')}\n`;
}
