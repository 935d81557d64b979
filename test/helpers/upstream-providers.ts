import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { CookieJar } from './cookie-jar.js';
import { testCertificate } from './dev-certificate.js';
import { HttpsClient } from './https-client.js';
import { oidcProviderConfiguration } from './oidc-provider-configuration.js';

/**
 * A real OpenID Provider for tests of the upstream flow: node-oidc-provider 9 (panva) over HTTPS on
 * 127.0.0.1, with this test process's certificate (`ca`: give it to the Gatehouse under test as
 * GatehouseOptions.outboundCa, or to OpenIdUpstreamProviders as policy.ca).
 *
 * What it does: the code flow with PKCE required (S256), `iss` in every authorization response
 * (RFC 9207; its metadata says `authorization_response_iss_parameter_supported`), ID tokens signed with
 * ES256 carrying `acr` and `amr`, userinfo, the scopes openid/email/profile (email, email_verified,
 * preferred_username, name). Consent is given without asking (every requested scope is granted).
 *
 * Its sign-in page (GET /interaction/:uid) is this module's own, not oidc-provider's devInteractions
 * (which checks no password and records no `amr`/`acr`): a form with the fields labelled LOGIN_FORM's
 * `username` and `password`, the button `submit`, and a `cancel` button that ends the request with
 * `error=access_denied`.
 */
export const LOGIN_FORM = {
  title: 'Sign in to the test provider',
  username: 'Username',
  password: 'Password',
  submit: 'Sign in',
  cancel: 'Cancel',
  /** Shown (with the form again) after a wrong user name or password. */
  wrong: 'Wrong username or password.',
} as const;

/** A person at the upstream. */
export interface UpstreamAccount {
  /** The ID token's `sub`. */
  subject: string;
  /** What is typed in the Username field (the subject works too). */
  username: string;
  password: string;
  email?: string;
  /** Sent as given: a test may set a string or leave it out to see it is not taken for true. */
  emailVerified?: unknown;
  name?: string;
  /** The ID token's `amr`; ["pwd"] unless set. */
  amr?: string[];
  /** The ID token's `acr`; unless set, the first `acr_values` requested (an upstream that meets it). */
  acr?: string;
}

/** A client registered at the upstream (RFC 7591 metadata, as oidc-provider takes it). */
export interface UpstreamClient {
  clientId: string;
  /** For client_secret_basic and client_secret_post. */
  clientSecret?: string;
  redirectUris: string[];
  /** client_secret_basic unless set. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  /** For private_key_jwt: the client's public keys. */
  jwks?: { keys: Array<Record<string, unknown>> };
}

export interface OidcProviderOptions {
  clients?: UpstreamClient[];
  accounts?: UpstreamAccount[];
  /** The `acr` values it advertises (`acr_values_supported`). */
  acrValues?: string[];
}

/**
 * Lets a test answer a request itself (true: answered, or held on purpose); the provider answers the
 * others. For upstreams that misbehave: a token endpoint that never answers, or answers too much.
 */
export type Intercept = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface OidcProvider {
  /** https://127.0.0.1:PORT: its issuer and origin. */
  issuer: string;
  /** Its certificate (PEM), to trust. */
  ca: string;
  /** People who can sign in, by subject; a test may add or change them at any time. */
  accounts: Map<string, UpstreamAccount>;
  /** Registers a client (or replaces one with the same id) at any time. */
  registerClient(client: UpstreamClient): void;
  /** Requests so far, as "METHOD /path" (no query), in order. */
  requests: string[];
  intercept: Intercept | undefined;
  /**
   * Signs in at the upstream without a browser: follows `authorizationUrl` through the sign-in page
   * (or its Cancel button) to the redirect back, and answers the URL the browser would be sent to.
   */
  signIn(authorizationUrl: string, as: { username: string; password: string } | 'cancel'): Promise<URL>;
  close(): Promise<void>;
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  const tls = await testCertificate();
  const accounts = new Map((options.accounts ?? []).map((account) => [account.subject, account]));
  const clients = new Map<string, Record<string, unknown>>();
  const registerClient = (client: UpstreamClient) => {
    clients.set(client.clientId, {
      client_id: client.clientId,
      ...(client.clientSecret === undefined ? {} : { client_secret: client.clientSecret }),
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
      ...(client.jwks === undefined ? {} : { jwks: client.jwks }),
    });
  };
  for (const client of options.clients ?? []) registerClient(client);

  const server: Server = createServer({ key: tls.key, cert: tls.cert });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const issuer = `https://127.0.0.1:${port}`;

  const provider = new Provider(
    issuer,
    oidcProviderConfiguration({
      adapter: mapAdapter(clients),
      acrValues: options.acrValues ?? ['urn:gatehouse:test:loa:1', 'urn:gatehouse:test:loa:2'],
      kid: `test-${randomBytes(4).toString('hex')}`,
      findAccount: (_ctx: unknown, subject: string) => {
        const account = accounts.get(subject);
        if (account === undefined) return undefined;
        return {
          accountId: subject,
          claims: () => ({
            sub: subject,
            preferred_username: account.username,
            ...(account.email === undefined ? {} : { email: account.email }),
            ...(account.emailVerified === undefined ? {} : { email_verified: account.emailVerified }),
            ...(account.name === undefined ? {} : { name: account.name }),
          }),
        };
      },
    }),
  );

  const requests: string[] = [];
  const handle = provider.callback();
  const harness: OidcProvider = {
    issuer,
    ca: tls.cert,
    accounts,
    registerClient,
    requests,
    intercept: undefined,
    async signIn(authorizationUrl, as) {
      return signInWithoutBrowser(issuer, tls.cert, authorizationUrl, as);
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.push(`${req.method ?? 'GET'} ${path}`);
    if (harness.intercept?.(req, res) === true) return;
    const interaction = /^\/interaction\/([\w-]+)(\/login|\/abort)?$/.exec(path);
    if (interaction !== null) {
      interact(provider, accounts, req, res, interaction[1] ?? '', interaction[2]).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(error instanceof Error ? error.message : 'failed');
      });
      return;
    }
    void handle(req, res);
  });
  return harness;
}

/** The sign-in page, its form and its Cancel button. */
async function interact(
  provider: Provider,
  accounts: Map<string, UpstreamAccount>,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  action: string | undefined,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('not this interaction');
  if (action === '/abort' && req.method === 'POST') {
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'End-User aborted interaction' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (action === '/login' && req.method === 'POST') {
    const form = new URLSearchParams(await readBody(req));
    const login = form.get('username') ?? '';
    const account = [...accounts.values()].find(
      (candidate) => candidate.username === login || candidate.subject === login,
    );
    if (account === undefined || account.password !== form.get('password')) {
      page(res, 200, loginPage(uid, true));
      return;
    }
    const requested =
      typeof details.params.acr_values === 'string' ? details.params.acr_values.split(' ') : [];
    const acr = account.acr ?? requested[0];
    await provider.interactionFinished(
      req,
      res,
      {
        login: {
          accountId: account.subject,
          amr: account.amr ?? ['pwd'],
          ...(acr ? { acr } : {}),
          remember: true,
        },
      },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (details.prompt.name !== 'login') {
    // Consent is given in loadExistingGrant; any other prompt is not part of these tests.
    page(res, 501, `<p>prompt ${escapeHtml(details.prompt.name)} is not handled</p>`);
    return;
  }
  page(res, 200, loginPage(uid, false));
}

function loginPage(uid: string, wrong: boolean): string {
  return `<h1>${LOGIN_FORM.title}</h1>
${wrong ? `<p role="alert">${LOGIN_FORM.wrong}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<label for="username">${LOGIN_FORM.username}</label> <input id="username" name="username" autocomplete="username" required>
<label for="password">${LOGIN_FORM.password}</label> <input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">${LOGIN_FORM.submit}</button>
</form>
<form method="post" action="/interaction/${uid}/abort"><button type="submit">${LOGIN_FORM.cancel}</button></form>`;
}

function page(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${LOGIN_FORM.title}</title></head><body>${body}</body></html>`,
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Follows redirects on the provider's origin with a cookie jar, filling the form on the way. */
async function signInWithoutBrowser(
  issuer: string,
  ca: string,
  authorizationUrl: string,
  as: { username: string; password: string } | 'cancel',
): Promise<URL> {
  const http = new HttpsClient(issuer, ca);
  const jar = new CookieJar();
  const origin = new URL(issuer).origin;
  try {
    let next = new URL(authorizationUrl);
    for (let step = 0; step < 10; step += 1) {
      if (next.origin !== origin) return next;
      let res = await jar.get(http, `${next.pathname}${next.search}`);
      const interaction = /^\/interaction\/([\w-]+)$/.exec(next.pathname);
      if (res.status === 200 && interaction !== null) {
        const uid = interaction[1] ?? '';
        res =
          as === 'cancel'
            ? await jar.post(http, `/interaction/${uid}/abort`, {})
            : await jar.post(http, `/interaction/${uid}/login`, {
                username: as.username,
                password: as.password,
              });
      }
      const location = res.headers.location;
      if (res.status < 300 || res.status >= 400 || typeof location !== 'string') {
        throw new Error(`the upstream answered ${res.status} at ${next.pathname}: ${res.text.slice(0, 300)}`);
      }
      next = new URL(location, next);
    }
    throw new Error('too many redirects at the upstream');
  } finally {
    http.close();
  }
}

/**
 * oidc-provider's storage, in this provider's memory: clients from the test's registry (so a client can
 * be registered after start, once the redirect URI is known), everything else in a Map.
 */
function mapAdapter(clients: Map<string, Record<string, unknown>>) {
  const store = new Map<string, Record<string, unknown>>();
  const index = new Map<string, string>();
  const grants = new Map<string, Set<string>>();
  return (model: string) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async upsert(id: string, payload: Record<string, unknown>) {
        store.set(key(id), payload);
        if (typeof payload.uid === 'string' && model === 'Session') index.set(`uid:${payload.uid}`, id);
        if (typeof payload.userCode === 'string') index.set(`userCode:${payload.userCode}`, id);
        if (typeof payload.grantId === 'string') {
          const members = grants.get(payload.grantId) ?? new Set<string>();
          members.add(key(id));
          grants.set(payload.grantId, members);
        }
      },
      async find(id: string) {
        if (model === 'Client') return clients.get(id);
        return store.get(key(id));
      },
      async findByUid(uid: string) {
        const id = index.get(`uid:${uid}`);
        return id === undefined ? undefined : store.get(key(id));
      },
      async findByUserCode(userCode: string) {
        const id = index.get(`userCode:${userCode}`);
        return id === undefined ? undefined : store.get(key(id));
      },
      async consume(id: string) {
        const payload = store.get(key(id));
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id: string) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId: string) {
        for (const member of grants.get(grantId) ?? []) store.delete(member);
        grants.delete(grantId);
      },
    };
  };
}
