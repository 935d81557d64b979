/**
 * The upstream identity provider of the `federated` scenario (decision 40): oidc-provider 9 (panva)
 * as an OpenID Provider in a process of its own, so that its work is never counted as Gatehouse's.
 * The code flow with PKCE, ES256 ID tokens, userinfo; one client (Gatehouse, client_secret_basic, its
 * callback as redirect URI) and one person, signed in at once when asked (the interaction finishes
 * without a form: the bench measures Gatehouse, not a person typing at the upstream). Its configuration
 * is the tests' upstream's (test/helpers/oidc-provider-configuration.ts).
 *
 * Usage: node oidc-upstream.js --port N --cert FILE --key FILE --client-id ID --client-secret SECRET
 *        --redirect-uri URI
 */
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';
import { oidcProviderConfiguration } from '../../test/helpers/oidc-provider-configuration.js';
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

const provider = new Provider(
  `https://127.0.0.1:${port}`,
  oidcProviderConfiguration({
    kid: 'bench-upstream-es256',
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
  }),
);

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
