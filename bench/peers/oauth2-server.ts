/**
 * Peer: @node-oauth/oauth2-server 5, client_credentials, opaque bearer tokens, an in-memory model with
 * one client (the bench's client_credentials client), answering the same POST /token as Gatehouse.
 *
 * Served the way its documentation shows (its README points to Express and the express-oauth-server
 * wrapper; the wrapper is this, in a few lines): an Express app parsing the form body with
 * express.urlencoded, the request and response wrapped in the library's Request/Response, the
 * library's answer copied back. Express runs on node:https with the bench's certificate and the
 * keep-alive timing Fastify gives bench/peer-server.ts by default (72 s keep-alive, no request or
 * connection timeout, unlimited requests per socket), so the transport matches the other rows.
 *
 * Usage: node oauth2-server.js --port N --cert FILE --key FILE --client-id ID --client-secret SECRET
 */
import OAuth2Server from '@node-oauth/oauth2-server';
import express from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { peerArguments, servePeer } from './transport.js';

const peer = peerArguments('oauth2-server');
const { clientId, clientSecret } = peer;

const digest = (value: string) => createHash('sha256').update(value).digest();
const secretDigest = digest(clientSecret);
const client: OAuth2Server.Client = { id: clientId, grants: ['client_credentials'] };
/** The service account a client_credentials token stands for (the model must name one). */
const serviceUser: OAuth2Server.User = { id: clientId };

/**
 * Opaque tokens mean the server keeps every token it issues (a resource server asks it about them):
 * the in-memory store the library's documentation sketches, here a Map by token value. It grows for
 * the life of this process, which lasts one bench scenario.
 */
const tokens = new Map<string, OAuth2Server.Token>();

const model: OAuth2Server.ClientCredentialsModel = {
  async getClient(id, secret) {
    if (id !== clientId || typeof secret !== 'string') return false;
    // Digests first: equal lengths, so the comparison's time says nothing about the secret.
    return timingSafeEqual(digest(secret), secretDigest) ? client : false;
  },
  async getUserFromClient() {
    return serviceUser;
  },
  async saveToken(token, tokenClient, user) {
    const saved: OAuth2Server.Token = { ...token, client: tokenClient, user };
    tokens.set(token.accessToken, saved);
    return saved;
  },
  async getAccessToken(accessToken) {
    return tokens.get(accessToken) ?? false;
  },
  async validateScope(_user, _client, scope) {
    // No scopes in this bench: the request asks for none, and none is granted.
    return scope ?? [];
  },
};

const oauth = new OAuth2Server({ model, accessTokenLifetime: 3600 });
const app = express();
app.disable('x-powered-by');
app.use(express.urlencoded({ extended: false }));
app.post('/token', (req, res) => {
  const response = new OAuth2Server.Response(res);
  oauth.token(new OAuth2Server.Request(req), response).then(
    () => {
      res.set(response.headers as Record<string, string>);
      res.status(response.status ?? 200).json(response.body);
    },
    (err: { code?: number; name?: string; message?: string }) => {
      res.set(response.headers as Record<string, string>);
      res.status(err.code ?? 500).json({ error: err.name ?? 'server_error', error_description: err.message });
    },
  );
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

servePeer('oauth2-server', peer, app);
