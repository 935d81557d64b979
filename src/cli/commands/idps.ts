import { CLI_AUDIT } from '../../core/audit/audit-log.js';
import type {
  ClaimMappingInput,
  IdentityProviderInput,
  IdentityProviderView,
} from '../../core/federation/identity-providers.js';
import { UsageError, isHelpFlag, parseCommandArgs, readSecret } from '../args.js';
import { COMMANDS } from '../command-table.js';
import { notFound, printJson, type Cli } from '../context.js';
import { IDPS_HELP } from '../help.js';

/** The public key a private_key_jwt provider verifies Gatehouse's assertions with, as a JWK Set. */
const jwksOf = (view: IdentityProviderView) => JSON.stringify({ keys: [view.public_jwk] });

/** `idps show` for people: every setting, never a secret (whether one is set, at most). */
function describe(view: IdentityProviderView): string {
  const claims = Object.entries(view.claim_mapping)
    .map(([field, claim]) => `${field}=${claim}`)
    .join(' ');
  const lines = [
    `id:                       ${view.id}`,
    `name:                     ${view.name}`,
    `kind:                     ${view.kind === 'oidc' ? 'oidc (an OpenID Provider, by discovery)' : 'oauth2 (plain OAuth 2.0)'}`,
    ...(view.issuer === null ? [] : [`issuer:                   ${view.issuer}`]),
    `authorization_endpoint:   ${view.authorization_endpoint ?? '-'}`,
    `token_endpoint:           ${view.token_endpoint ?? '-'}`,
    `userinfo_endpoint:        ${view.userinfo_endpoint ?? '-'}`,
    `client_id:                ${view.client_id}`,
    `client_auth:              ${view.client_auth}${view.client_secret_set ? ' (client secret set)' : ''}`,
    ...(view.public_jwk === null ? [] : [`jwks:                     ${jwksOf(view)}`]),
    `scopes:                   ${view.scopes.join(' ') || '-'}`,
    `claims:                   ${claims}`,
    `link_by_verified_email:   ${view.link_by_verified_email}`,
    `trust_upstream_assurance: ${view.trust_upstream_assurance}`,
    `required_acr:             ${view.required_acr ?? '-'}`,
    `logo_uri:                 ${view.logo_uri ?? '-'}`,
    `redirect_uri:             ${view.redirect_uri}`,
  ];
  return lines.join('\n') + '\n';
}

/** What `create` says first: what to register at the provider. */
function registration(view: IdentityProviderView): string {
  const where =
    view.kind === 'oidc' ? `an OpenID Provider at ${view.issuer ?? ''}` : 'a plain OAuth 2.0 provider';
  const lines = [
    `Created identity provider ${view.id} (${view.name}), ${where}.`,
    '',
    'Register this redirect URI at the provider:',
    `  ${view.redirect_uri}`,
  ];
  if (view.public_jwk !== null) {
    lines.push(
      '',
      'And this public key (a JWK Set), which checks the assertions Gatehouse signs (private_key_jwt):',
      `  ${jwksOf(view)}`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/** --on / --no-on: true, false, or undefined when neither is given. */
function toggle(values: Record<string, unknown>, flag: string): boolean | undefined {
  const on = values[flag] === true;
  const off = values[`no-${flag}`] === true;
  if (on && off) throw new UsageError(`give --${flag} or --no-${flag}, not both`);
  return on ? true : off ? false : undefined;
}

const scopesOf = (value: string | undefined) => value?.split(/\s+/).filter(Boolean);
/** '' removes an optional value on update (as `users update --email ''` does). */
const nullable = (value: string | undefined) => (value === '' ? null : value);

/** The claim mapping the flags give; undefined when none. */
function claimMappingOf(values: Record<string, string | boolean | undefined>): ClaimMappingInput | undefined {
  const mapping: ClaimMappingInput = {};
  const flags: Array<[keyof ClaimMappingInput, string]> = [
    ['subject', 'subject-claim'],
    ['username', 'username-claim'],
    ['email', 'email-claim'],
    ['email_verified', 'email-verified-claim'],
    ['name', 'name-claim'],
  ];
  for (const [field, flag] of flags) {
    const claim = values[flag];
    if (typeof claim === 'string') mapping[field] = claim;
  }
  return Object.keys(mapping).length === 0 ? undefined : mapping;
}

const ALL_FLAGS = COMMANDS.idps.actions.update.flags;
const ACTIONS = COMMANDS.idps.actions;

/** `gatehouse idps`: upstream identity providers as data (decision 39). */
export async function runIdpsCommand(argv: string[], cli: Cli): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || isHelpFlag(action)) {
    cli.io.stdout.write(IDPS_HELP);
    if (action === undefined)
      throw new UsageError(`idps needs an action: ${Object.keys(ACTIONS).join(', ')}`);
    return;
  }
  if (!Object.hasOwn(ACTIONS, action)) throw new UsageError(`unknown idps action "${action}"`);
  const spec = ACTIONS[action as keyof typeof ACTIONS];
  const { values, positionals } = parseCommandArgs(
    rest,
    { ...ALL_FLAGS, id: { type: 'string' } },
    `idps ${action}`,
    spec.positionals,
  );
  // One parser for the types; options another action takes are refused here.
  for (const flag of Object.keys(values)) {
    if (!['data-dir', 'database-url', 'json', 'help'].includes(flag) && !(flag in spec.flags)) {
      throw new UsageError(`idps ${action} has no option --${flag}`);
    }
  }
  if (values.help) {
    cli.io.stdout.write(IDPS_HELP);
    return;
  }
  const id = positionals[0];
  if (spec.positionals === 1 && id === undefined) throw new UsageError(`idps ${action} needs an ID`);
  const linkByVerifiedEmail = toggle(values, 'link-by-verified-email');
  const trustUpstreamAssurance = toggle(values, 'trust-upstream-assurance');
  // Read before the store is opened, so a slow pipe (or a person pasting) holds no handle.
  const clientSecret = values['client-secret-stdin']
    ? await readSecret(cli.io, 'Client secret: ')
    : undefined;
  const settings: Partial<IdentityProviderInput> = {
    name: values.name,
    issuer: values.issuer,
    authorization_endpoint: values['authorization-endpoint'],
    token_endpoint: values['token-endpoint'],
    userinfo_endpoint: values['userinfo-endpoint'],
    client_id: values['client-id'],
    client_auth: values['client-auth'],
    client_secret: clientSecret,
    scopes: scopesOf(values.scopes),
    claim_mapping: claimMappingOf(values),
    link_by_verified_email: linkByVerifiedEmail,
    trust_upstream_assurance: trustUpstreamAssurance,
    required_acr: nullable(values['required-acr']),
    logo_uri: nullable(values['logo-uri']),
  };
  await cli.withEngine(values, async (context) => {
    const { engine, json, out } = context;
    const registry = engine.identityProviders;
    switch (action) {
      case 'create': {
        const provider = await registry.create(
          {
            ...settings,
            id: values.id,
            name: values.name as string,
            client_id: values['client-id'] as string,
          },
          CLI_AUDIT,
        );
        const view = registry.view(provider);
        if (json) printJson(context, view);
        else out.write(registration(view) + describe(view));
        return;
      }
      case 'list': {
        const providers = await registry.all();
        const views = providers.map((provider) => registry.view(provider));
        if (json) printJson(context, views);
        else {
          for (const view of views) {
            out.write(
              `${view.id}  ${view.name}  ${view.kind}  ${view.issuer ?? view.authorization_endpoint}\n`,
            );
          }
          if (views.length === 0) out.write('No identity providers.\n');
        }
        return;
      }
      case 'show': {
        const view = registry.view(await registry.require(id as string));
        if (json) printJson(context, view);
        else out.write(describe(view));
        return;
      }
      case 'update': {
        if (Object.values(settings).every((value) => value === undefined)) {
          throw new UsageError(
            'idps update needs something to change: --name, --issuer, the endpoints, --client-id, ' +
              '--client-secret-stdin, --client-auth, --scopes, a --*-claim, --link-by-verified-email, ' +
              '--trust-upstream-assurance (or their --no-), --required-acr or --logo-uri',
          );
        }
        const provider = await registry.update(await registry.require(id as string), settings, CLI_AUDIT);
        const view = registry.view(provider);
        if (json) printJson(context, view);
        else out.write(`Updated identity provider ${view.id}.\n` + describe(view));
        return;
      }
      case 'delete': {
        const provider = await registry.require(id as string);
        const deleted = await registry.delete(provider.id, CLI_AUDIT);
        if (deleted === undefined) throw notFound(`identity provider with id ${id}`);
        if (json) {
          printJson(context, {
            deleted: provider.id,
            links_removed: deleted.linksRemoved,
            clients_changed: deleted.clientsChanged,
          });
        } else {
          out.write(
            `Deleted identity provider ${provider.id} (${provider.name}) and ${deleted.linksRemoved} ` +
              `link(s) of users to it: they no longer sign in through it.\n` +
              (deleted.clientsChanged > 0
                ? `${deleted.clientsChanged} client(s) that offered it no longer do.\n`
                : ''),
          );
        }
        return;
      }
    }
  });
}
