/**
 * Peer: oidc-provider 9 (panva), client_credentials with JWT access tokens, its default in-memory
 * adapter, one client (the bench's client_credentials client, client_secret_basic), answering the
 * same POST /token as Gatehouse.
 *
 * oidc-provider issues opaque access tokens unless a resource server asks for JWTs: RFC 8707 resource
 * indicators are on (`features.resourceIndicators`), every request without a `resource` gets the one
 * resource below (`defaultResource`), and `getResourceServerInfo` gives it `accessTokenFormat: 'jwt'`
 * signed with ES256, the algorithm Gatehouse signs its access tokens with by default (oidc-provider's own
 * default would be RS256, its `id_token_signed_response_alg`), so both sign alike.
 *
 * A Provider is a Koa application; its documentation mounts `provider.callback()` in a node server,
 * which is done here on node:https with the bench's certificate and Fastify's keep-alive timing (see
 * transport.ts), so the transport matches the other rows.
 *
 * Usage: node oidc-provider.js --port N --cert FILE --key FILE --client-id ID --client-secret SECRET
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';
import { peerArguments, servePeer } from './transport.js';

const peer = peerArguments('oidc-provider');
const { port, clientId, clientSecret } = peer;

/** The audience of every token: the one API this bench's client asks for access to. */
const RESOURCE = 'https://api.bench.invalid/';
const ALG = 'ES256';

const signingKey = {
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
  kid: 'bench-es256',
  alg: ALG,
  use: 'sig',
};

const provider = new Provider(`https://localhost:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  clientDefaults: { id_token_signed_response_alg: ALG },
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // A number rather than its default function (which logs a notice): the tokens' lifetime, as Gatehouse's.
  ttl: { ClientCredentials: 3600 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx: unknown, resource: string) => {
        if (resource !== RESOURCE) throw new Error(`unknown resource ${resource}`);
        return {
          scope: '',
          audience: RESOURCE,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: ALG } },
        };
      },
    },
  },
});

const handle = provider.callback();
servePeer('oidc-provider', peer, (req, res) => {
  // The bench waits for GET /healthz before it measures; oidc-provider has no such route.
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  void handle(req, res);
});
