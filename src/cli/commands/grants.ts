import type { Grant } from '../../core/model.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { notFound, printJson, type WithStorage } from '../context.js';
import { GRANTS_HELP } from '../help.js';

/** A grant still in force: not revoked, not past its end of life (as /v1 lists them). */
function isStanding(grant: Grant, now: number): boolean {
  return grant.revokedAt === null && (grant.expiresAt === null || grant.expiresAt > now);
}

function viewGrant(grant: Grant) {
  return {
    id: grant.id,
    client_id: grant.clientId,
    user_id: grant.userId,
    scopes: grant.scope,
    created_at: new Date(grant.createdAt * 1000).toISOString(),
    expires_at: grant.expiresAt === null ? null : new Date(grant.expiresAt * 1000).toISOString(),
  };
}

export async function runGrantsCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    process.stdout.write(GRANTS_HELP);
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
    process.stdout.write(GRANTS_HELP);
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
  await withStorage(values, async (context) => {
    const { storage, json, out, clock } = context;
    const now = clock.now();
    if (action === 'list') {
      let grants: Grant[];
      if (values.client !== undefined) {
        if ((await storage.clients.get(values.client)) === undefined) {
          throw notFound(`client with id ${values.client}`);
        }
        grants = await storage.grants.listByClient(values.client);
      } else {
        const name = values.user as string;
        const user = (await storage.users.get(name)) ?? (await storage.users.getByUsername(name));
        if (user === undefined) throw notFound(`user ${name}`);
        grants = await storage.grants.listByUser(user.id);
      }
      const views = grants.filter((grant) => isStanding(grant, now)).map(viewGrant);
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
    const grant = await storage.grants.get(grantId as string);
    // Revoking a grant retires its refresh tokens in the same transaction; its access tokens fail
    // validation from then on (they carry the grant id).
    if (grant === undefined || !isStanding(grant, now) || !(await storage.grants.revoke(grant.id, now))) {
      throw notFound(`standing grant with id ${grantId}`);
    }
    if (json) printJson(context, { revoked: grant.id });
    else out.write(`Revoked grant ${grant.id}: its refresh tokens and access tokens no longer work.\n`);
  });
}
