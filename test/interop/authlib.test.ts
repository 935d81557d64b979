import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { User } from '../../src/core/model.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/spawned-server.js';

// Debian's python3-authlib: an independent OpenID Connect client. Its OAuth2Session runs the code flow's
// requests (PKCE S256, nonce, state) and its JOSE implementation verifies the ID token against /jwks
// with the claims of Core §3.1.3.7 (iss, aud, nonce, exp, at_hash through CodeIDToken).
const PYTHON = '/usr/bin/python3';
const skip =
  existsSync(PYTHON) &&
  spawnSync(PYTHON, ['-c', 'import authlib.integrations.requests_client, authlib.oidc.core'], {
    stdio: 'ignore',
  }).status === 0
    ? false
    : 'authlib not installed for /usr/bin/python3 (apt-get install python3-authlib python3-requests)';
if (skip !== false) console.log(`notice: authlib interop skipped; ${skip}`);

const REDIRECT = 'https://rp.example/cb';

// Two steps, each printing one JSON line: "authorize" builds the authorization URL, "token" redeems
// the code from the redirect the test's browser came back with and checks the ID token.
const SCRIPT = String.raw`
import json, sys
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebToken
from authlib.jose.errors import JoseError
from authlib.oidc.core import CodeIDToken
args = json.loads(sys.argv[1])
ca = args["ca"]
meta = requests.get(args["issuer"] + "/.well-known/openid-configuration", verify=ca).json()
session = OAuth2Session(args["client_id"], args["client_secret"], scope="openid profile email",
                        redirect_uri=args["redirect_uri"], code_challenge_method="S256",
                        token_endpoint_auth_method=args["auth_method"], state=args["state"])
session.verify = ca
if args["step"] == "authorize":
    url, _ = session.create_authorization_url(meta["authorization_endpoint"], state=args["state"], nonce=args["nonce"],
                                              code_verifier=args["verifier"], verify=ca)
    print(json.dumps({"url": url}))
    sys.exit(0)

# The state in the redirect is checked against the session's; the verifier goes to /token.
token = session.fetch_token(meta["token_endpoint"], authorization_response=args["response"],
                            code_verifier=args["verifier"], verify=ca)
jwks = session.get(meta["jwks_uri"]).json()

def decode(algorithms, nonce):
    options = {"iss": {"essential": True, "value": meta["issuer"]},
               "aud": {"essential": True, "value": args["client_id"]},
               "nonce": {"essential": True, "value": nonce}}
    claims = JsonWebToken(algorithms).decode(
        token["id_token"], jwks, claims_cls=CodeIDToken, claims_options=options,
        claims_params={"nonce": nonce, "client_id": args["client_id"], "access_token": token["access_token"]})
    claims.validate()
    return claims

def refused(algorithms, nonce):
    try:
        decode(algorithms, nonce)
        return None
    except JoseError as error:
        return error.error

claims = decode([args["alg"]], args["nonce"])
other = "ES256" if args["alg"] == "RS256" else "RS256"
userinfo = session.get(meta["userinfo_endpoint"])
print(json.dumps({
    "token_type": token["token_type"],
    "alg": claims.header["alg"],
    "claims": dict(claims),
    "wrong_nonce": refused([args["alg"]], args["nonce"] + "x"),
    "other_alg_only": refused([other], args["nonce"]),
    "userinfo_status": userinfo.status_code,
    "userinfo": userinfo.json(),
}))
`;

interface TokenStep {
  token_type: string;
  alg: string;
  claims: Record<string, unknown>;
  wrong_nonce: string | null;
  other_alg_only: string | null;
  userinfo_status: number;
  userinfo: Record<string, unknown>;
}

// Declared either way: a missing library is reported as a skip, never as a pass.
for (const backend of backends()) {
  describe(`interop: Python authlib, OpenID Connect client (${backend})`, () => {
    let server: TestServer | undefined;
    let issuer: string;
    let dir: string;
    let caFile: string;
    let alice: { user: User; password: string };
    before(async () => {
      if (skip !== false) return;
      // authlib checks iss against the discovery document's issuer, which must be where it is served.
      const port = await freePort();
      issuer = `https://localhost:${port}`;
      server = await startTestServer(backend, { port, issuer }, { transport: 'https' });
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-authlib-'));
      caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, server.ca);
      alice = await server.user(undefined, undefined, { email: 'alice@example.com', name: 'Alice Example' });
    });
    after(async () => {
      if (server === undefined) return;
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    async function python<T>(args: Record<string, string>): Promise<T> {
      // Asynchronous: the server answering the script runs in this very process.
      const run = await promisify(execFile)(PYTHON, ['-c', SCRIPT, JSON.stringify(args)], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, PYTHONPATH: '' },
      });
      return JSON.parse(run.stdout) as T;
    }

    for (const [alg, authMethod] of [
      ['RS256', 'client_secret_basic'],
      ['ES256', 'client_secret_post'],
    ] as const) {
      it(
        `code flow with PKCE and nonce; authlib verifies the ${alg} ID token with /jwks (${authMethod})`,
        { skip },
        async () => {
          assert.ok(server !== undefined);
          const { client, secret } = await server.client({
            name: `authlib ${alg}`,
            redirect_uris: [REDIRECT],
            grant_types: ['authorization_code'],
            scopes: ['openid', 'profile', 'email'],
            ...(alg === 'ES256' ? { id_token_signed_response_alg: 'ES256' } : {}),
          });
          const args = {
            issuer,
            ca: caFile,
            client_id: client.id,
            client_secret: secret,
            redirect_uri: REDIRECT,
            auth_method: authMethod,
            alg,
            state: randomBytes(12).toString('base64url'),
            nonce: randomBytes(12).toString('base64url'),
            verifier: randomBytes(32).toString('base64url'),
          };
          const { url } = await python<{ url: string }>({ ...args, step: 'authorize' });
          const request = new URL(url);
          assert.equal(request.origin, issuer);
          assert.equal(request.searchParams.get('code_challenge_method'), 'S256');
          assert.equal(request.searchParams.get('nonce'), args.nonce);

          // The browser: sign-in, then consent with every box ticked.
          const browser = new FormBrowser(server);
          const signInPage = await browser.get(request.pathname + request.search);
          assert.equal(signInPage.status, 200);
          const signedIn = await browser.post('/sign-in', {
            csrf_token: FormBrowser.hidden(signInPage, 'csrf_token'),
            next: FormBrowser.hidden(signInPage, 'next'),
            username: alice.user.username,
            password: alice.password,
          });
          assert.equal(signedIn.status, 303);
          const consentPage = await browser.get(String(signedIn.headers.location));
          assert.match(consentPage.text, /name="decision" value="allow"/);
          const allowed = await browser.post('/consent', {
            csrf_token: FormBrowser.hidden(consentPage, 'csrf_token'),
            request: FormBrowser.hidden(consentPage, 'request'),
            decision: 'allow',
            lifetime: '3600',
            scope: ['profile', 'email'],
          });
          assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
          const response = String(allowed.headers.location);
          assert.ok(response.startsWith(`${REDIRECT}?`), response);

          const out = await python<TokenStep>({ ...args, step: 'token', response });
          assert.equal(out.token_type.toLowerCase(), 'bearer');
          assert.equal(out.alg, alg);
          assert.equal(out.claims.iss, issuer);
          assert.equal(out.claims.aud, client.id);
          assert.equal(out.claims.sub, alice.user.id);
          assert.equal(out.claims.nonce, args.nonce);
          assert.equal(
            typeof out.claims.at_hash,
            'string',
            'checked by CodeIDToken against the access token',
          );
          assert.equal(out.wrong_nonce, 'invalid_claim', 'another nonce is refused');
          assert.equal(out.other_alg_only, 'unsupported_algorithm', `only ${alg} was registered`);
          assert.equal(out.userinfo_status, 200);
          assert.equal(out.userinfo.sub, alice.user.id);
          assert.equal(out.userinfo.email, 'alice@example.com');
          assert.equal(out.userinfo.name, 'Alice Example');
        },
      );
    }
  });
}
