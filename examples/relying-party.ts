/**
 * An example relying party: a small web app that signs its users in with Gatehouse (OpenID Connect),
 * using openid-client.
 *
 *   GET  /            who is signed in (the ID token's claims and UserInfo), or a sign-in link
 *   GET  /login       to Gatehouse: the code flow with PKCE (S256), nonce and state
 *   GET  /callback    back from Gatehouse: code redeemed, ID token validated, UserInfo fetched
 *   POST /logout      to Gatehouse's end_session_endpoint (RP-Initiated Logout 1.0)
 *   GET  /signed-out  where Gatehouse sends the browser after signing out
 *
 * There is no server-side state: the pending sign-in (state, nonce, PKCE verifier) and then the
 * session sit in cookies signed with HMAC-SHA-256. See examples/README.md for a walk-through.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import * as oidc from 'openid-client';

export interface RelyingPartyOptions {
  /** Gatehouse's issuer: discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** This app's own address as the browser sees it, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** Signs the cookies; a random key (sessions end with the process) when absent. */
  cookieKey?: Buffer;
  /** A fetch that trusts a private CA, for tests; outside them NODE_EXTRA_CA_CERTS does that. */
  fetch?: oidc.CustomFetch;
}

const LOGIN_COOKIE = 'rp_login';
const SESSION_COOKIE = 'rp_session';
/** A pending sign-in lasts as long as a person takes to sign in. */
const LOGIN_SECONDS = 600;
const SESSION_SECONDS = 3600;

interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
}

interface Session {
  idToken: string;
  claims: Record<string, unknown>;
  userinfo: Record<string, unknown>;
}

export async function createRelyingParty(options: RelyingPartyOptions): Promise<Server> {
  const config = await oidc.discovery(
    new URL(options.issuer),
    options.clientId,
    options.clientSecret,
    undefined,
    options.fetch ? { [oidc.customFetch]: options.fetch } : undefined,
  );
  const key = options.cookieKey ?? randomBytes(32);
  const redirectUri = `${options.baseUrl}/callback`;
  const signedOutUri = `${options.baseUrl}/signed-out`;
  // Secure cookies only when the app itself is served over https.
  const secure = options.baseUrl.startsWith('https:') ? '; Secure' : '';

  // A cookie's value is {value, exp} and its HMAC: neither changed nor kept past its time.
  const seal = (value: unknown, seconds: number) => {
    const exp = Math.floor(Date.now() / 1000) + seconds;
    const body = Buffer.from(JSON.stringify({ value, exp })).toString('base64url');
    return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
  };
  const unseal = <T>(cookie: string | undefined): T | undefined => {
    const [body = '', mac = ''] = (cookie ?? '').split('.');
    const expected = createHmac('sha256', key).update(body).digest();
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const { value, exp } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      value: T;
      exp: number;
    };
    return exp > Date.now() / 1000 ? value : undefined;
  };
  // The sign-out form's answer redirects to Gatehouse: form-action must allow its origin too.
  const csp = `default-src 'none'; form-action 'self' ${new URL(options.issuer).origin}`;
  const page = (res: ServerResponse, status: number, title: string, body: string) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
    });
    res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1>${body}`);
  };
  // SameSite=Lax: sent on the top-level GET back from Gatehouse, never on another site's POST.
  const setCookie = (name: string, value: string, maxAge: number) =>
    `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', options.baseUrl);
    const cookies = parseCookies(req.headers.cookie);
    const route = `${req.method} ${url.pathname}`;

    if (route === 'GET /') {
      const session = unseal<Session>(cookies[SESSION_COOKIE]);
      if (session === undefined) {
        return page(
          res,
          200,
          'Example app',
          `<p>Not signed in.</p><p><a href="/login">Sign in with Gatehouse</a></p>`,
        );
      }
      const { userinfo, claims } = session;
      return page(
        res,
        200,
        'Example app',
        `<p>Signed in as <strong>${escape(userinfo.name ?? userinfo.preferred_username ?? claims.sub)}</strong>` +
          ` (<span id="email">${escape(userinfo.email ?? 'no email')}</span>).</p>` +
          `<h2>ID token claims</h2><pre id="claims">${escape(JSON.stringify(claims, null, 2))}</pre>` +
          `<h2>UserInfo</h2><pre id="userinfo">${escape(JSON.stringify(userinfo, null, 2))}</pre>` +
          `<form method="post" action="/logout"><button>Sign out</button></form>`,
      );
    }

    if (route === 'GET /login') {
      const pending: PendingLogin = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        verifier: oidc.randomPKCECodeVerifier(),
      };
      const authorization = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid profile email',
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      });
      res.writeHead(302, {
        location: authorization.href,
        'set-cookie': setCookie(LOGIN_COOKIE, seal(pending, LOGIN_SECONDS), LOGIN_SECONDS),
      });
      return void res.end();
    }

    if (route === 'GET /callback') {
      const pending = unseal<PendingLogin>(cookies[LOGIN_COOKIE]);
      if (pending === undefined) return page(res, 400, 'Sign-in failed', '<p>No sign-in in progress.</p>');
      let session: Session;
      try {
        // Checks state, redeems the code with the verifier, validates the ID token (iss, aud, exp,
        // nonce: Core §3.1.3.7), then UserInfo, whose sub must be the ID token's (Core §5.3.2).
        const tokens = await oidc.authorizationCodeGrant(config, url, {
          pkceCodeVerifier: pending.verifier,
          expectedNonce: pending.nonce,
          expectedState: pending.state,
          idTokenExpected: true,
        });
        const claims = tokens.claims()!;
        const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        session = { idToken: tokens.id_token!, claims: { ...claims }, userinfo: { ...userinfo } };
      } catch (error) {
        // An error from Gatehouse (access_denied, ...) or a response that failed a check.
        const reason =
          error instanceof oidc.AuthorizationResponseError ? error.error : (error as Error).message;
        return page(
          res,
          400,
          'Sign-in failed',
          `<p id="error">${escape(reason)}</p><p><a href="/">Back</a></p>`,
        );
      }
      res.writeHead(303, {
        location: '/',
        'set-cookie': [
          setCookie(LOGIN_COOKIE, '', 0),
          setCookie(SESSION_COOKIE, seal(session, SESSION_SECONDS), SESSION_SECONDS),
        ],
      });
      return void res.end();
    }

    if (route === 'POST /logout') {
      const session = unseal<Session>(cookies[SESSION_COOKIE]);
      // Signed out here first; then Gatehouse ends its own browser session and sends the user back.
      const logout = oidc.buildEndSessionUrl(config, {
        post_logout_redirect_uri: signedOutUri,
        ...(session ? { id_token_hint: session.idToken } : {}),
      });
      res.writeHead(303, { location: logout.href, 'set-cookie': setCookie(SESSION_COOKIE, '', 0) });
      return void res.end();
    }

    if (route === 'GET /signed-out') {
      return page(
        res,
        200,
        'Signed out',
        '<p>You are signed out.</p><p><a href="/login">Sign in again</a></p>',
      );
    }

    return page(res, 404, 'Not found', '<p>Not found.</p>');
  }

  return createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`error: ${(error as Error).message}`);
    });
  });
}

function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) cookies[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return cookies;
}

function escape(value: unknown): string {
  return String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** `node dist/examples/relying-party.js`, configured by the environment. */
async function main(): Promise<void> {
  const env = process.env;
  const port = Number(env.PORT ?? 3000);
  if (!env.RP_CLIENT_ID || !env.RP_CLIENT_SECRET) {
    process.stderr.write('set RP_CLIENT_ID and RP_CLIENT_SECRET (see examples/README.md)\n');
    process.exit(2);
  }
  const baseUrl = env.RP_BASE_URL ?? `http://127.0.0.1:${port}`;
  const server = await createRelyingParty({
    issuer: env.GATEHOUSE_ISSUER ?? 'https://localhost:8443',
    clientId: env.RP_CLIENT_ID,
    clientSecret: env.RP_CLIENT_SECRET,
    baseUrl,
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write(`relying party on ${baseUrl}\n`));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`relying party: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
