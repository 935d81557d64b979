/**
 * The upstream identity provider of the `federated` scenario (decision 40): oidc-provider 9 (panva)
 * as an OpenID Provider in a process of its own, so that its work is never counted as Gatehouse's.
 * The code flow with PKCE, ES256 ID tokens, userinfo; one client (Gatehouse, client_secret_basic, its
 * callback as redirect URI) and one person, signed in at once when asked (the interaction finishes
 * without a form: the bench measures Gatehouse, not a person typing at the upstream). Consent is given
 * in loadExistingGrant.
 *
 * Usage: node oidc-upstream.js --port N --cert FILE --key FILE --client-id ID --client-secret SECRET
 *        --redirect-uri URI
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';
import { servePeer } from './transport.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string' },
  },
});
const { port, cert, key } = values;
const clientId = values['client-id'];
const clientSecret = values['client-secret'];
const redirectUri = values['redirect-uri'];
if (!port || !cert || !key || !clientId || !clientSecret || !redirectUri) {
  process.stderr.write(
    'usage: oidc-upstream --port N --cert FILE --key FILE --client-id ID --client-secret SECRET --redirect-uri URI\n',
  );
  process.exit(2);
}

/** The one person who signs in. */
const BENCH_ACCOUNT = 'bench-upstream-user';

const signingKey = {
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
  kid: 'bench-upstream-es256',
  alg: 'ES256',
  use: 'sig',
};

/** The subset of oidc-provider's Koa context loadExistingGrant reads. */
interface GrantContext {
  oidc: {
    params: { scope?: unknown };
    client: { clientId: string };
    session: { accountId?: string };
    provider: {
      Grant: new (properties: { clientId: string; accountId: string | undefined }) => {
        addOIDCScope(scope: string): void;
        save(): Promise<string>;
      };
    };
  };
}

const provider = new Provider(`https://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  claims: {
    acr: null,
    amr: null,
    auth_time: null,
    openid: ['sub', 'acr', 'amr'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  loadExistingGrant: async (ctx: GrantContext) => {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(typeof ctx.oidc.params.scope === 'string' ? ctx.oidc.params.scope : 'openid');
    await grant.save();
    return grant;
  },
  findAccount: (_ctx: unknown, subject: string) =>
    subject !== BENCH_ACCOUNT
      ? undefined
      : {
          accountId: subject,
          claims: () => ({
            sub: subject,
            preferred_username: 'bench-federated',
            email: 'bench-federated@upstream.bench.invalid',
            email_verified: true,
          }),
        },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    IdToken: 600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
});

const handle = provider.callback();
servePeer('oidc-upstream', { port, cert, key, clientId, clientSecret }, (req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  if (req.method === 'GET' && /^\/interaction\/[\w-]+$/.test(req.url ?? '')) {
    provider
      .interactionFinished(
        req,
        res,
        { login: { accountId: BENCH_ACCOUNT, amr: ['pwd'], remember: true } },
        { mergeWithLastSubmission: false },
      )
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(error instanceof Error ? error.message : 'failed');
      });
    return;
  }
  void handle(req, res);
});
