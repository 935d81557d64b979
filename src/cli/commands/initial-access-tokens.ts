import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { INITIAL_ACCESS_TOKEN_MAX_TTL } from '../../core/clients/dynamic-registration.js';
import type { InitialAccessTokenView } from '../../core/clients/initial-access-tokens.js';
import { UsageError, integerFlag, isHelpFlag, parseCommandArgs, type Options } from '../args.js';
import { printJson, type Cli } from '../context.js';
import { INITIAL_ACCESS_TOKENS_HELP } from '../help.js';

/** Each action's own options and how many arguments it takes. */
const ACTIONS: Record<string, { options: Options; positionals: number }> = {
  create: { options: { 'expires-in': { type: 'string' }, scopes: { type: 'string' } }, positionals: 0 },
  list: { options: {}, positionals: 0 },
  delete: { options: {}, positionals: 1 },
};

function describe(view: InitialAccessTokenView): string {
  const scopes = view.scopes === null ? 'those open registration allows' : view.scopes.join(' ') || '-';
  return (
    `${view.id}  expires ${view.expires_at}${view.expired ? ' (expired)' : ''}  ` +
    `clients registered: ${view.clients_registered}  scopes: ${scopes}\n`
  );
}

/** `gatehouse initial-access-tokens`: RFC 7591 §3 initial access tokens for GATEHOUSE_DYNAMIC_REGISTRATION=token. */
export async function runInitialAccessTokensCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(INITIAL_ACCESS_TOKENS_HELP);
    if (action === undefined) {
      throw new UsageError(`initial-access-tokens needs an action: ${Object.keys(ACTIONS).join(', ')}`);
    }
    return;
  }
  const spec = ACTIONS[action];
  if (spec === undefined) throw new UsageError(`unknown initial-access-tokens action "${action}"`);
  const { values, positionals } = parseCommandArgs(
    rest,
    { 'expires-in': { type: 'string' }, scopes: { type: 'string' } },
    `initial-access-tokens ${action}`,
    spec.positionals,
  );
  for (const flag of Object.keys(values)) {
    if (!['data-dir', 'database-url', 'json', 'help'].includes(flag) && !(flag in spec.options)) {
      throw new UsageError(`initial-access-tokens ${action} has no option --${flag}`);
    }
  }
  if (values.help) {
    cli.io.stdout.write(INITIAL_ACCESS_TOKENS_HELP);
    return;
  }
  const id = positionals[0];
  if (spec.positionals === 1 && id === undefined) {
    throw new UsageError(`initial-access-tokens ${action} needs an ID (see initial-access-tokens list)`);
  }
  const expiresIn = integerFlag(values['expires-in'], '--expires-in', 60, INITIAL_ACCESS_TOKEN_MAX_TTL);
  const scopes = values.scopes?.split(/\s+/).filter(Boolean);
  await cli.withEngine(values, async (context) => {
    const { engine, json, out, config } = context;
    switch (action) {
      case 'create': {
        const { token, view } = await engine.initialAccessTokens.create(
          {
            ...(expiresIn === undefined ? {} : { expiresIn }),
            ...(scopes === undefined ? {} : { scopes }),
          },
          CLI_AUDIT,
        );
        if (json) printJson(context, { ...view, initial_access_token: token });
        else {
          out.write(
            `initial_access_token: ${token}   (shown once; store it now)\n` +
              `id:                   ${view.id}\n` +
              `expires:              ${view.expires_at}\n` +
              `scopes:               ${view.scopes === null ? 'those open registration allows' : view.scopes.join(' ') || '-'}\n` +
              'It registers clients at /register (Authorization: Bearer <token>) until it expires or is deleted.\n',
          );
          if (config.dynamicRegistration === 'off') {
            out.write(
              'Note: GATEHOUSE_DYNAMIC_REGISTRATION is off here; the server takes the token only with token or open.\n',
            );
          }
        }
        return;
      }
      case 'list': {
        const views = await engine.initialAccessTokens.list();
        if (json) printJson(context, views);
        else {
          for (const view of views) out.write(describe(view));
          if (views.length === 0) out.write('No initial access tokens.\n');
        }
        return;
      }
      case 'delete': {
        await engine.initialAccessTokens.delete(id as string, CLI_AUDIT);
        if (json) printJson(context, { deleted: id });
        else out.write(`Deleted initial access token ${id}; the clients it registered stay.\n`);
        return;
      }
    }
  });
}
