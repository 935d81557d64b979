import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import { readFileSync } from 'node:fs';
import { viewClient, type ClientView } from '../../core/clients/client-registry.js';
import { CLIENT_REGISTRATIONS, DEVICE_CODE_GRANT_TYPE, TOKEN_EXCHANGE_GRANT } from '../../core/model.js';
import { UsageError, isHelpFlag, parseCommandArgs, type Options } from '../args.js';
import { notFound, printJson, type Cli } from '../context.js';
import { CLIENTS_HELP } from '../help.js';
import { CLIENT_SETTINGS } from '../command-table.js';

function describe(view: ClientView & { client_secret?: string }): string {
  const lines = [
    `client_id:     ${view.client_id}`,
    ...(view.client_secret ? [`client_secret: ${view.client_secret}   (shown once; store it now)`] : []),
    `name:          ${view.name}`,
    `public:        ${view.public}`,
    `auth_method:   ${view.token_endpoint_auth_method}`,
    ...(view.jwks_uri !== null ? [`jwks_uri:      ${view.jwks_uri}`] : []),
    ...(view.jwks !== null
      ? [`jwks:          ${view.jwks.keys.length} key(s): ${view.jwks.keys.map(keyLabel).join(', ')}`]
      : []),
    `grant_types:   ${view.grant_types.join(', ')}`,
    `redirect_uris: ${view.redirect_uris.join(' ') || '-'}`,
    `scopes:        ${view.scopes.join(' ') || '-'}`,
    `token_type:    ${view.token_type}`,
    `id_token_alg:  ${view.id_token_signed_response_alg}`,
    `registration:  ${view.registration}`,
    `require_par:   ${view.require_pushed_authorization_requests}`,
    `require_dpop:  ${view.dpop_bound_access_tokens}`,
    `require_mfa:   ${view.require_mfa}`,
    ...(view.post_logout_redirect_uris.length > 0
      ? [`post_logout:   ${view.post_logout_redirect_uris.join(' ')}`]
      : []),
    ...(view.token_exchange_targets.length > 0
      ? [`exchange_to:   ${view.token_exchange_targets.join(' ')}`]
      : []),
    `identity_providers: ${view.identity_providers === null ? '(every one)' : view.identity_providers.join(', ') || '(none)'}`,
  ];
  return lines.join('\n') + '\n';
}

/** A registered key as one word: its kid, or its type and curve. */
function keyLabel(key: Record<string, unknown>): string {
  if (typeof key.kid === 'string') return key.kid;
  return [key.kty, key.crv].filter((part) => typeof part === 'string').join(' ');
}

/** --jwks-file: a JWK Set as JSON (the registry checks what it holds). */
function jwksFromFile(path: string | undefined): unknown {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--jwks-file: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--jwks-file: ${path} is not JSON (a JWK Set: {"keys": [...]})`);
  }
}

/** The flags of `clients create` and `update`, declared once in the command table. */
const SETTINGS = CLIENT_SETTINGS;

/** RFC 9126 §6: --require-par turns it on, --no-require-par off; undefined when neither is given. */
function requirePar(values: { 'require-par'?: boolean; 'no-require-par'?: boolean }): boolean | undefined {
  if (values['require-par'] && values['no-require-par']) {
    throw new UsageError('give --require-par or --no-require-par, not both');
  }
  if (values['require-par']) return true;
  if (values['no-require-par']) return false;
  return undefined;
}

/** RFC 9449 §5.2: --require-dpop turns dpop_bound_access_tokens on, --no-require-dpop off. */
function requireDpop(values: { 'require-dpop'?: boolean; 'no-require-dpop'?: boolean }): boolean | undefined {
  if (values['require-dpop'] && values['no-require-dpop']) {
    throw new UsageError('give --require-dpop or --no-require-dpop, not both');
  }
  if (values['require-dpop']) return true;
  if (values['no-require-dpop']) return false;
  return undefined;
}

/** Decision 34: --require-mfa makes the client's users sign in with two factors, --no-require-mfa not. */
function requireMfa(values: { 'require-mfa'?: boolean; 'no-require-mfa'?: boolean }): boolean | undefined {
  if (values['require-mfa'] && values['no-require-mfa']) {
    throw new UsageError('give --require-mfa or --no-require-mfa, not both');
  }
  if (values['require-mfa']) return true;
  if (values['no-require-mfa']) return false;
  return undefined;
}

/**
 * Decision 39: --identity-providers a,b offers those (in that order; '' none), --all-identity-providers
 * every one (null); undefined when neither is given.
 */
function identityProviders(values: {
  'identity-providers'?: string;
  'all-identity-providers'?: boolean;
}): string[] | null | undefined {
  const list = values['identity-providers'];
  if (list !== undefined && values['all-identity-providers']) {
    throw new UsageError('give --identity-providers or --all-identity-providers, not both');
  }
  if (values['all-identity-providers']) return null;
  return list
    ?.split(',')
    .map((id) => id.trim())
    .filter(Boolean);
}

/** Each action's own options and how many arguments it takes. */
const ACTIONS: Record<string, { options: Options; positionals: number }> = {
  create: { options: { ...SETTINGS, public: { type: 'boolean' } }, positionals: 0 },
  list: { options: { registration: { type: 'string' } }, positionals: 0 },
  show: { options: {}, positionals: 1 },
  delete: { options: {}, positionals: 1 },
  update: { options: SETTINGS, positionals: 1 },
  'rotate-secret': { options: {}, positionals: 1 },
};

/** Short names the CLI accepts for grant types that are URNs (RFC 8693 §2.1's, RFC 8628 §3.4's). */
const GRANT_TYPE_SHORT_NAMES: Readonly<Record<string, string>> = {
  token_exchange: TOKEN_EXCHANGE_GRANT,
  device_code: DEVICE_CODE_GRANT_TYPE,
};
const grantTypesOf = (value: string | undefined) =>
  value
    ?.split(',')
    .map((g) => g.trim())
    .filter(Boolean)
    .map((g) => GRANT_TYPE_SHORT_NAMES[g] ?? g);
const scopesOf = (value: string | undefined) => value?.split(/\s+/).filter(Boolean);
/** `--post-logout-redirect-uri ''` alone clears the list on update. */
const urisOf = (values: string[] | undefined) => values?.filter((uri) => uri !== '');

export async function runClientsCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(CLIENTS_HELP);
    if (action === undefined) {
      throw new UsageError(`clients needs an action: ${Object.keys(ACTIONS).join(', ')}`);
    }
    return;
  }
  const spec = ACTIONS[action];
  if (spec === undefined) throw new UsageError(`unknown clients action "${action}"`);
  const { values: parsed, positionals } = parseCommandArgs(
    rest,
    { ...SETTINGS, public: { type: 'boolean' }, registration: { type: 'string' } },
    `clients ${action}`,
    spec.positionals,
  );
  // One parser for the types; options another action takes are refused here.
  for (const flag of Object.keys(parsed)) {
    if (!['data-dir', 'database-url', 'json', 'help'].includes(flag) && !(flag in spec.options)) {
      throw new UsageError(`clients ${action} has no option --${flag}`);
    }
  }
  const values = parsed;
  if (values.help) {
    cli.io.stdout.write(CLIENTS_HELP);
    return;
  }
  const id = positionals[0];
  if (spec.positionals === 1 && id === undefined) throw new UsageError(`clients ${action} needs a CLIENT_ID`);
  const registration = CLIENT_REGISTRATIONS.find((kind) => kind === values.registration);
  if (values.registration !== undefined && registration === undefined) {
    throw new UsageError(`--registration must be one of ${CLIENT_REGISTRATIONS.join(', ')}`);
  }
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    const existing = () => engine.clients.require(id as string);
    switch (action) {
      case 'create': {
        if (values.name === undefined) throw new UsageError('clients create needs --name');
        const { client, secret } = await engine.clients.create(
          {
            name: values.name,
            redirect_uris: values['redirect-uri'],
            grant_types: grantTypesOf(values['grant-types']),
            scopes: scopesOf(values.scopes),
            token_type: values['token-type'],
            public: values.public,
            post_logout_redirect_uris: urisOf(values['post-logout-redirect-uri']),
            id_token_signed_response_alg: values['id-token-signed-response-alg'],
            token_endpoint_auth_method: values['auth-method'],
            jwks_uri: values['jwks-uri'],
            jwks: jwksFromFile(values['jwks-file']),
            require_pushed_authorization_requests: requirePar(values),
            dpop_bound_access_tokens: requireDpop(values),
            require_mfa: requireMfa(values),
            token_exchange_targets: urisOf(values['exchange-target']),
            identity_providers: identityProviders(values),
          },
          undefined,
          CLI_AUDIT,
        );
        const view = { ...viewClient(client), ...(secret ? { client_secret: secret } : {}) };
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'list': {
        const { items } = await engine.clients.list({
          limit: 10_000,
          offset: 0,
          ...(registration === undefined ? {} : { registration }),
        });
        const views = items.map(viewClient);
        if (json) printJson(context, views);
        else {
          for (const view of views) {
            out.write(
              `${view.client_id}  ${view.name}  [${view.grant_types.join(',')}]  ${view.registration}\n`,
            );
          }
          if (views.length === 0) out.write('No clients.\n');
        }
        return;
      }
      case 'show': {
        const view = viewClient(await existing());
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'update': {
        const changes = {
          name: values.name,
          redirect_uris: values['redirect-uri'],
          grant_types: grantTypesOf(values['grant-types']),
          scopes: scopesOf(values.scopes),
          token_type: values['token-type'],
          post_logout_redirect_uris: urisOf(values['post-logout-redirect-uri']),
          id_token_signed_response_alg: values['id-token-signed-response-alg'],
          token_endpoint_auth_method: values['auth-method'],
          jwks_uri: values['jwks-uri'],
          jwks: jwksFromFile(values['jwks-file']),
          require_pushed_authorization_requests: requirePar(values),
          dpop_bound_access_tokens: requireDpop(values),
          require_mfa: requireMfa(values),
          token_exchange_targets: urisOf(values['exchange-target']),
          identity_providers: identityProviders(values),
        };
        if (Object.values(changes).every((value) => value === undefined)) {
          throw new UsageError(
            'clients update needs something to change: --name, --redirect-uri, --grant-types, --scopes, ' +
              '--token-type, --post-logout-redirect-uri, --id-token-signed-response-alg, --require-par, ' +
              '--no-require-par, --require-dpop, --no-require-dpop, --require-mfa, --no-require-mfa, ' +
              '--auth-method, --jwks-uri, --jwks-file, --exchange-target, --identity-providers ' +
              'or --all-identity-providers',
          );
        }
        const { client, secret } = await engine.clients.update(await existing(), changes, CLI_AUDIT);
        const view = { ...viewClient(client), ...(secret ? { client_secret: secret } : {}) };
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'rotate-secret': {
        const secret = await engine.clients.rotateSecret(await existing(), CLI_AUDIT);
        if (json) printJson(context, { client_id: id, client_secret: secret });
        else {
          out.write(
            `client_id:     ${id}\nclient_secret: ${secret}   (shown once; store it now)\n` +
              'The old secret no longer works.\n',
          );
        }
        return;
      }
      case 'delete': {
        if (!(await engine.clients.delete(id as string, CLI_AUDIT))) throw notFound(`client with id ${id}`);
        if (json) printJson(context, { deleted: id });
        else out.write(`Deleted client ${id} and every grant and token issued to it.\n`);
        return;
      }
    }
  });
}
