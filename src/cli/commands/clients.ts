import { createClient, viewClient, type ClientView } from '../../core/client-registry.js';
import { systemClock } from '../../shared/clock.js';
import { UsageError, isHelpFlag, parseCommandArgs } from '../args.js';
import { printJson, type WithStorage } from '../context.js';
import { CLIENTS_HELP } from '../help.js';

function describe(view: ClientView & { client_secret?: string }): string {
  const lines = [
    `client_id:     ${view.client_id}`,
    ...(view.client_secret ? [`client_secret: ${view.client_secret}   (shown once; store it now)`] : []),
    `name:          ${view.name}`,
    `public:        ${view.public}`,
    `grant_types:   ${view.grant_types.join(', ')}`,
    `redirect_uris: ${view.redirect_uris.join(' ') || '-'}`,
    `scopes:        ${view.scopes.join(' ') || '-'}`,
    `token_type:    ${view.token_type}`,
  ];
  return lines.join('\n') + '\n';
}

export async function runClientsCommand(argv: string[], withStorage: WithStorage): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    name: { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'grant-types': { type: 'string' },
    scopes: { type: 'string' },
    public: { type: 'boolean' },
    'token-type': { type: 'string' },
  });
  if (values.help || action === undefined || isHelpFlag(action)) {
    process.stdout.write(CLIENTS_HELP);
    if (action === undefined) throw new UsageError('clients needs an action: create, list, show or delete');
    return;
  }
  await withStorage(values, async (context) => {
    const { storage, json, out } = context;
    switch (action) {
      case 'create': {
        if (values.name === undefined) throw new UsageError('clients create needs --name');
        const { client, secret } = await createClient(storage, systemClock, {
          name: values.name,
          redirect_uris: values['redirect-uri'],
          grant_types: values['grant-types']
            ?.split(',')
            .map((g) => g.trim())
            .filter(Boolean),
          scopes: values.scopes?.split(/\s+/).filter(Boolean),
          token_type: values['token-type'],
          public: values.public,
        });
        const view = { ...viewClient(client), ...(secret ? { client_secret: secret } : {}) };
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'list': {
        const { items } = await storage.clients.list({ limit: 10_000, offset: 0 });
        const views = items.map(viewClient);
        if (json) printJson(context, views);
        else {
          for (const view of views) {
            out.write(`${view.client_id}  ${view.name}  [${view.grant_types.join(',')}]\n`);
          }
          if (views.length === 0) out.write('No clients.\n');
        }
        return;
      }
      case 'show': {
        const id = positionals[0];
        if (id === undefined) throw new UsageError('clients show needs a CLIENT_ID');
        const client = await storage.clients.get(id);
        if (client === undefined) throw new Error(`no client with id ${id}`);
        if (json) printJson(context, viewClient(client));
        else out.write(describe(viewClient(client)));
        return;
      }
      case 'delete': {
        const id = positionals[0];
        if (id === undefined) throw new UsageError('clients delete needs a CLIENT_ID');
        if (!(await storage.clients.delete(id))) throw new Error(`no client with id ${id}`);
        if (json) printJson(context, { deleted: id });
        else out.write(`Deleted client ${id} and every grant and token issued to it.\n`);
        return;
      }
      default:
        throw new UsageError(`unknown clients action "${action}"`);
    }
  });
}
