import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Debian's python3-requests-oauthlib: a real, independent OAuth 2.0 client library.
const PYTHON = '/usr/bin/python3';
const skip =
  existsSync(PYTHON) &&
  spawnSync(PYTHON, ['-c', 'import requests_oauthlib'], { stdio: 'ignore' }).status === 0
    ? false
    : 'requests-oauthlib not installed for /usr/bin/python3 (apt-get install python3-requests-oauthlib)';
if (skip !== false) console.log(`notice: requests-oauthlib interop skipped; ${skip}`);

// Each step prints one JSON line; the test asserts on what the library got back.
const SCRIPT = String.raw`
import json, sys
from oauthlib.oauth2 import BackendApplicationClient, LegacyApplicationClient, WebApplicationClient
from requests_oauthlib import OAuth2Session
from requests.auth import HTTPBasicAuth
args = json.loads(sys.argv[1])
base, ca = args["base"], args["ca"]
out = {}
s = OAuth2Session(client=BackendApplicationClient(client_id=args["cc_id"]))
t = s.fetch_token(base + "/token", client_id=args["cc_id"], client_secret=args["cc_secret"], scope=["read"], verify=ca)
out["cc"] = {"token_type": t["token_type"], "scope": t.get("scope"), "has_refresh": "refresh_token" in t}
s = OAuth2Session(client=LegacyApplicationClient(client_id=args["pw_id"]))
t = s.fetch_token(base + "/token", username=args["username"], password=args["password"],
                  auth=HTTPBasicAuth(args["pw_id"], args["pw_secret"]), verify=ca)
first_refresh = t["refresh_token"]
t2 = s.refresh_token(base + "/token", auth=HTTPBasicAuth(args["pw_id"], args["pw_secret"]), verify=ca)
out["password"] = {"token_type": t["token_type"], "rotated": t2["refresh_token"] != first_refresh,
                   "access": t2["access_token"]}
s = OAuth2Session(client=WebApplicationClient(client_id=args["web_id"]), redirect_uri=args["redirect_uri"])
t = s.fetch_token(base + "/token", code=args["code"], client_secret=args["web_secret"],
                  include_client_id=True, code_verifier=args["verifier"], verify=ca)
out["code"] = {"token_type": t["token_type"], "has_refresh": "refresh_token" in t}
print(json.dumps(out))
`;

// Declared either way: a missing library is reported as a skip, never as a pass.
for (const backend of backends()) {
  describe(`interop: Python requests-oauthlib (${backend})`, () => {
    let server: TestServer | undefined;
    let dir: string;
    before(async () => {
      if (skip !== false) return;
      server = await startTestServer(backend, {}, { transport: 'https' });
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-interop-'));
    });
    after(async () => {
      if (server === undefined) return;
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it(
      'gets tokens with client_credentials, password, refresh and an authorization code',
      { skip },
      async () => {
        assert.ok(server !== undefined);
        const cc = await server.client({ scopes: ['read'], grant_types: ['client_credentials'] });
        const pw = await server.client({ scopes: ['profile'], grant_types: ['password', 'refresh_token'] });
        const web = await server.client({
          scopes: ['profile'],
          redirect_uris: ['https://app.example/callback'],
          grant_types: ['authorization_code', 'refresh_token'],
        });
        const { user, password } = await server.user();
        const verifier = 'v'.repeat(43) + '-interop-verifier';
        const { createHash } = await import('node:crypto');
        const { code } = await server.seedCode({
          client: web.client,
          user,
          codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
          codeChallengeMethod: 'S256',
        });
        const caFile = join(dir, 'ca.pem');
        writeFileSync(caFile, server.ca);
        const args = {
          // The certificate names localhost; requests checks the host name against it.
          base: server.url.replace('127.0.0.1', 'localhost'),
          ca: caFile,
          cc_id: cc.client.id,
          cc_secret: cc.secret,
          pw_id: pw.client.id,
          pw_secret: pw.secret,
          username: user.username,
          password,
          web_id: web.client.id,
          web_secret: web.secret,
          redirect_uri: 'https://app.example/callback',
          code,
          verifier,
        };
        // Asynchronous: the server answering the script runs in this very process.
        const run = await promisify(execFile)(PYTHON, ['-c', SCRIPT, JSON.stringify(args)], {
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, PYTHONPATH: '' },
        });
        const out = JSON.parse(run.stdout) as Record<string, Record<string, unknown>>;
        assert.equal(String(out.cc?.token_type).toLowerCase(), 'bearer');
        assert.deepEqual(out.cc?.scope, ['read']);
        assert.equal(out.cc?.has_refresh, false);
        assert.equal(out.password?.rotated, true);
        assert.equal(out.code?.has_refresh, true);
        // The access token the library got after refreshing is live at Gatehouse.
        const introspection = await server.http.request('/introspect', {
          form: { token: String(out.password?.access) },
          headers: {
            authorization: 'Basic ' + Buffer.from(`${cc.client.id}:${cc.secret}`).toString('base64'),
          },
        });
        assert.equal((introspection.json as { active: boolean }).active, true);
      },
    );
  });
}
