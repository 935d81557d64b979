import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { viewGrant } from '../../core/grants/grant-registry.js';
import type { Grant } from '../../core/model.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { notFound, printJson, type Cli } from '../context.js';
import { GRANTS_HELP } from '../help.js';

export async function runGrantsCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(GRANTS_HELP);
    if (action === undefined) throw new UsageError('grants needs an action: list or revoke');
    return;
  }
  if (action !== 'list' && action !== 'revoke') throw new UsageError(`unknown grants action "${action}"`);
  const { values, positionals } = parseCommandArgs(
    rest,
    { user: { type: 'string' }, client: { type: 'string' } },
    `grants ${action}`,
    action === 'revoke' ? 1 : 0,
  );
  if (values.help) {
    cli.io.stdout.write(GRANTS_HELP);
    return;
  }
  if (action === 'list' && (values.user === undefined) === (values.client === undefined)) {
    throw new UsageError('grants list needs --user (id or name) or --client CLIENT_ID (one of them)');
  }
  if (action === 'revoke' && (values.user !== undefined || values.client !== undefined)) {
    throw new UsageError('grants revoke takes only a GRANT_ID');
  }
  const grantId = positionals[0];
  if (action === 'revoke' && grantId === undefined) throw new UsageError('grants revoke needs a GRANT_ID');
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    if (action === 'list') {
      // Standing grants only, as /v1 lists them (GrantRegistry).
      let grants: Grant[];
      if (values.client !== undefined) {
        if ((await engine.clients.get(values.client)) === undefined) {
          throw notFound(`client with id ${values.client}`);
        }
        grants = await engine.grants.standingOfClient(values.client);
      } else {
        const name = values.user as string;
        const user = await engine.users.find(name);
        if (user === undefined) throw notFound(`user ${name}`);
        grants = await engine.grants.standingOfUser(user.id);
      }
      const views = grants.map(viewGrant);
      if (json) printJson(context, views);
      else {
        for (const view of views) {
          out.write(
            `${view.id}  client ${view.client_id}  user ${view.user_id}  [${view.scopes.join(' ')}]\n`,
          );
        }
        if (views.length === 0) out.write('No grants.\n');
      }
      return;
    }
    // Revoking a grant retires its refresh tokens in the same transaction; its access tokens fail
    // validation from then on (they carry the grant id).
    if (!(await engine.grants.revokeStanding(grantId as string, {}, CLI_AUDIT))) {
      throw notFound(`standing grant with id ${grantId}`);
    }
    if (json) printJson(context, { revoked: grantId });
    else out.write(`Revoked grant ${grantId}: its refresh tokens and access tokens no longer work.\n`);
  });
}
