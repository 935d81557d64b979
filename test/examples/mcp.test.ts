import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { decodeJwt } from 'jose';
import {
  createMcpExample,
  MCP_SCOPE,
  STEP_UP_TOOL,
  type SignInDetails,
  type WhoAmI,
} from '../../examples/mcp-server.js';
import type { AuthenticationRequirements } from 'gatehouse-oauth-resource-server';
import { clientCredentialsToken, tokenFor as issueToken } from '../helpers/api-requests.js';
import {
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { plainRequest } from '../helpers/resource-server-requests.js';
import { freePort } from '../helpers/spawned-server.js';

// examples/mcp-server.ts: an MCP server (the SDK's Streamable HTTP transport) behind the
// resource-server library, with RFC 9728 metadata naming Gatehouse.

const WELL_KNOWN = '/.well-known/oauth-protected-resource';
const OTHER = 'https://other.example/api';

/** The example on a free loopback port, its resource being its own /mcp URL. */
async function startMcpExample(gatehouse: TestServer, issuer: string, stepUp?: AuthenticationRequirements) {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const example = createMcpExample({
    issuer,
    resource,
    ...(stepUp === undefined ? {} : { stepUp }),
    resourceServer: {
      // The JWKS by address (the issuer's host name may not resolve to where the test server listens).
      jwksUri: `${gatehouse.http.baseUrl}/jwks`,
      ca: gatehouse.ca,
      jwksCooldownSeconds: 0,
      now: () => gatehouse.clock.now(),
    },
  });
  await new Promise<void>((resolve) => example.server.listen(port, '127.0.0.1', resolve));
  assert.equal((example.server.address() as AddressInfo).port, port);
  return { ...example, resource, origin: `http://127.0.0.1:${port}` };
}

/** Calls `whoami` with the SDK's own client, presenting `token` as a Bearer token. */
async function whoami(resource: string, token: string): Promise<WhoAmI> {
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(resource), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['whoami', STEP_UP_TOOL],
    );
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return result.structuredContent as unknown as WhoAmI;
  } finally {
    await client.close();
  }
}

/** Calls the step-up tool with the SDK's own client, presenting `token` as a Bearer token. */
async function signInDetails(resource: string, token: string): Promise<SignInDetails> {
  const client = new Client({ name: 'gatehouse-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(resource), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: STEP_UP_TOOL, arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return result.structuredContent as unknown as SignInDetails;
  } finally {
    await client.close();
  }
}

for (const backend of backends()) {
  describe(`examples/mcp-server with the MCP SDK's client (${backend})`, () => {
    let gatehouse: TestServer;
    let mcp: Awaited<ReturnType<typeof startMcpExample>>;
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      mcp = await startMcpExample(gatehouse, 'https://gatehouse.test');
      // RFC 8707: the MCP server and another service, each offering every scope.
      for (const uri of [mcp.resource, OTHER]) await gatehouse.gatehouse.engine.resources.create({ uri });
    });
    after(async () => {
      mcp?.close();
      await gatehouse?.close();
    });

    /** A client_credentials token Gatehouse issues for `resource` (RFC 8707), its `aud`. */
    async function tokenFor(resource: string, scopes = [MCP_SCOPE]) {
      const { client, credentials } = await clientCredentialsToken(gatehouse, scopes);
      const token = await issueToken(gatehouse, { grant_type: 'client_credentials', resource }, credentials);
      assert.equal(decodeJwt(token.access_token).aud, resource);
      return { client, token: token.access_token };
    }

    it('answers 401 with resource_metadata, and the metadata names Gatehouse', async () => {
      const res = await plainRequest(mcp.origin, '/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      assert.equal(res.status, 401);
      const metadataUrl = `${mcp.origin}${WELL_KNOWN}/mcp`;
      assert.equal(res.headers['www-authenticate'], `Bearer realm="mcp", resource_metadata="${metadataUrl}"`);
      const metadata = await plainRequest(mcp.origin, `${WELL_KNOWN}/mcp`);
      assert.deepEqual(metadata.json, {
        resource: mcp.resource,
        authorization_servers: ['https://gatehouse.test'],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: 'Gatehouse example MCP server',
      });
    });

    it('whoami answers with the token addressed to the server: its subject, client, scopes and audience', async () => {
      const { client, token } = await tokenFor(mcp.resource);
      assert.deepEqual(await whoami(mcp.resource, token), {
        subject: client.id,
        client_id: client.id,
        scopes: [MCP_SCOPE],
        audience: mcp.resource,
      });
    });

    it('refuses a token without the resource, for another resource, or without the scope', async () => {
      const plain = (await clientCredentialsToken(gatehouse, [MCP_SCOPE])).token.access_token;
      const other = (await tokenFor(OTHER)).token;
      for (const token of [plain, other]) {
        await assert.rejects(whoami(mcp.resource, token), /not issued for this resource/);
        const res = await plainRequest(mcp.origin, '/mcp', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        });
        assert.equal(res.status, 401);
        assert.match(
          String(res.headers['www-authenticate']),
          /resource_metadata="[^"]+", error="invalid_token", error_description="the access token was not issued for this resource \(aud\)"/,
        );
      }
      const unscoped = (await tokenFor(mcp.resource, ['notes:read'])).token;
      const res = await plainRequest(mcp.origin, '/mcp', {
        method: 'POST',
        headers: { authorization: `Bearer ${unscoped}`, 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      assert.equal(res.status, 403);
      assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope".*scope="mcp:tools"$/);
    });

    it('the step-up tool answers 401 insufficient_user_authentication (RFC 9470) to a token without the sign-in it needs', async () => {
      const { token } = await tokenFor(mcp.resource);
      const call = (body: string) =>
        plainRequest(mcp.origin, '/mcp', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body,
        });
      const res = await call(
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${STEP_UP_TOOL}","arguments":{}}}`,
      );
      assert.equal(res.status, 401);
      const metadataUrl = `${mcp.origin}${WELL_KNOWN}/mcp`;
      assert.equal(
        res.headers['www-authenticate'],
        `Bearer realm="mcp", resource_metadata="${metadataUrl}", error="insufficient_user_authentication", ` +
          'error_description="the access token does not say how the user signed in (acr)", ' +
          'acr_values="urn:gatehouse:acr:multi-factor phr"',
      );
      // The other tool, in a batch or alone, is not held to it.
      const other = await call(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}',
      );
      assert.equal(other.status, 200, other.text);
    });

    it('refuses a Host header other than the resource host (DNS rebinding)', async () => {
      const { token } = await tokenFor(mcp.resource);
      const res = await plainRequest(mcp.origin, '/mcp', {
        method: 'POST',
        headers: {
          host: 'attacker.example',
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      });
      assert.equal(res.status, 403);
    });
  });
}

/**
 * The MCP client's side of OAuth, as an application keeps it: one session's registration, PKCE
 * verifier and tokens in memory, and the authorization URL it would open in the user's browser.
 */
class TestOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  get redirectUrl(): string {
    return CLIENT_REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test client',
      redirect_uris: [CLIENT_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface Exchange {
  method: string;
  url: string;
  body: string | undefined;
  status: number;
  challenge: string | null;
}

/**
 * The fetch the SDK's client is given: Gatehouse (https, the test CA) through trustingFetch, the MCP
 * server (plain http on the loopback address) through Node's own fetch, which streams its SSE answers.
 * Every exchange is recorded, to check the steps the client took.
 */
function recordingFetch(ca: string) {
  const https = trustingFetch(ca);
  const exchanges: Exchange[] = [];
  const fetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = String(input);
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const response = url.startsWith('https:')
      ? await https.fetch(url, {
          method: init.method,
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          body,
          signal: init.signal ?? undefined,
        })
      : await globalThis.fetch(input, init);
    exchanges.push({
      method: init.method ?? 'GET',
      url,
      body,
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
    });
    return response;
  };
  return { fetch, exchanges, close: () => https.close() };
}

// What the MCP specification's authorization asks of a client, done by the SDK's own client against
// Gatehouse and the example: discovery from the 401 (RFC 9728), dynamic registration (RFC 7591), the
// code flow with PKCE and `resource` (RFC 8707) through Gatehouse's pages in Chromium, then the tool.
describe(
  'examples/mcp-server: the MCP SDK client authorizes through Gatehouse in Chromium',
  { skip: browserSkip },
  () => {
    let browser: TestBrowser;
    before(async () => {
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    for (const backend of backends()) {
      describe(backend, () => {
        let gatehouse: TestServer;
        let issuer: string;
        let mcp: Awaited<ReturnType<typeof startMcpExample>>;
        let recorder: ReturnType<typeof recordingFetch>;
        let alice: Awaited<ReturnType<TestServer['user']>>;
        before(async () => {
          const port = await freePort();
          issuer = `https://localhost:${port}`;
          gatehouse = await startTestServer(
            backend,
            {
              port,
              issuer,
              dynamicRegistration: 'open',
              dynamicRegistrationScopes: [MCP_SCOPE],
            },
            { transport: 'https' },
          );
          mcp = await startMcpExample(gatehouse, issuer);
          // The operator's two steps: dynamic registration open, for the MCP server's scope (above),
          // and the MCP server registered as a resource offering that scope.
          await gatehouse.gatehouse.engine.resources.create({
            uri: mcp.resource,
            name: 'Example MCP server',
            scopes: [MCP_SCOPE],
          });
          recorder = recordingFetch(gatehouse.ca);
          alice = await gatehouse.user();
        });
        after(async () => {
          recorder?.close();
          mcp?.close();
          await gatehouse?.close();
        });

        it('401 with resource_metadata, discovery, registration, code flow with PKCE and resource, then whoami', async () => {
          const provider = new TestOAuthProvider();
          const first = new Client({ name: 'mcp-test', version: '1.0.0' });
          await assert.rejects(
            first.connect(
              new StreamableHTTPClientTransport(new URL(mcp.resource), {
                authProvider: provider,
                fetch: recorder.fetch,
              }),
            ),
            UnauthorizedError,
          );
          const metadataUrl = `${mcp.origin}${WELL_KNOWN}/mcp`;
          const [refused] = recorder.exchanges;
          assert.equal(refused?.url, mcp.resource);
          assert.equal(refused?.status, 401);
          assert.equal(refused?.challenge, `Bearer realm="mcp", resource_metadata="${metadataUrl}"`);
          const seen = (method: string, url: string) =>
            recorder.exchanges.find((exchange) => exchange.method === method && exchange.url === url);
          assert.equal(seen('GET', metadataUrl)?.status, 200, 'the protected resource metadata, as named');
          assert.ok(
            recorder.exchanges.some(
              (exchange) => exchange.url.startsWith(`${issuer}/.well-known/`) && exchange.status === 200,
            ),
            "Gatehouse's metadata, from authorization_servers",
          );
          const registration = recorder.exchanges.find(
            (exchange) => exchange.method === 'POST' && exchange.status === 201,
          );
          assert.ok(registration?.url.startsWith(issuer), 'registered at Gatehouse (RFC 7591)');
          const clientId = provider.information?.client_id;
          assert.equal(typeof clientId, 'string');

          const authorization = provider.authorizationUrl;
          assert.ok(authorization, 'the client asked to open the authorization URL');
          assert.equal(authorization.origin, issuer);
          const params = authorization.searchParams;
          assert.equal(params.get('client_id'), clientId);
          assert.equal(params.get('resource'), mcp.resource);
          assert.equal(params.get('code_challenge_method'), 'S256');
          assert.equal(params.get('scope'), MCP_SCOPE);

          const { context, page } = await clientContext(browser);
          let code: string | null;
          try {
            await page.goto(authorization.href);
            await signIn(page, alice.user.username, alice.password);
            await expectConsentPage(page, 'MCP test client');
            await page.getByRole('button', { name: 'Allow' }).click();
            const landed = await landedAtClient(page);
            code = landed.searchParams.get('code');
          } finally {
            await context.close();
          }
          assert.ok(code, 'a code at the redirect URI');

          const transport = new StreamableHTTPClientTransport(new URL(mcp.resource), {
            authProvider: provider,
            fetch: recorder.fetch,
          });
          await transport.finishAuth(code);
          const exchange = recorder.exchanges.find(
            (entry) => entry.method === 'POST' && entry.body?.includes('grant_type=authorization_code'),
          );
          assert.equal(exchange?.status, 200);
          const sent = new URLSearchParams(exchange?.body);
          assert.equal(sent.get('resource'), mcp.resource);
          assert.equal(typeof sent.get('code_verifier'), 'string');
          const accessToken = provider.saved?.access_token ?? '';
          assert.equal(decodeJwt(accessToken).aud, mcp.resource);

          const client = new Client({ name: 'mcp-test', version: '1.0.0' });
          await client.connect(transport);
          try {
            const result = await client.callTool({ name: 'whoami', arguments: {} });
            assert.notEqual(result.isError, true, JSON.stringify(result));
            assert.deepEqual(result.structuredContent, {
              subject: alice.user.id,
              client_id: clientId,
              scopes: [MCP_SCOPE],
              audience: mcp.resource,
            });
          } finally {
            await client.close();
          }
        });

        it('step-up (RFC 9470): a sign-in older than the tool accepts gets the challenge; the client asks again with max_age, the user signs in again, and the tool answers', async () => {
          const stepUp = await startMcpExample(gatehouse, issuer, { maxAge: 60 });
          try {
            await gatehouse.gatehouse.engine.resources.create({ uri: stepUp.resource, scopes: [MCP_SCOPE] });
            // A public client of the MCP server, registered as the SDK registers one (RFC 7591).
            const registered = await recorder.fetch(`${issuer}/register`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                client_name: 'MCP step-up client',
                redirect_uris: [CLIENT_REDIRECT],
                grant_types: ['authorization_code'],
                response_types: ['code'],
                token_endpoint_auth_method: 'none',
                scope: MCP_SCOPE,
              }),
            });
            assert.equal(registered.status, 201);
            const clientId = ((await registered.json()) as { client_id: string }).client_id;
            const { context, page } = await clientContext(browser);
            /** The code flow in this one browser (its session kept), and the token for the MCP server. */
            const authorize = async (extra: Record<string, string>, asked: () => Promise<void>) => {
              const { verifier, challenge } = pkcePair();
              const url = new URL(`${issuer}/authorize`);
              url.search = new URLSearchParams({
                client_id: clientId,
                redirect_uri: CLIENT_REDIRECT,
                response_type: 'code',
                scope: MCP_SCOPE,
                resource: stepUp.resource,
                code_challenge: challenge,
                code_challenge_method: 'S256',
                state: 'st',
                ...extra,
              }).toString();
              await page.goto(url.href);
              await asked();
              await expectConsentPage(page, 'MCP step-up client');
              await page.getByRole('button', { name: 'Allow' }).click();
              const code = (await landedAtClient(page)).searchParams.get('code') ?? '';
              const answer = await recorder.fetch(`${issuer}/token`, {
                method: 'POST',
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                body: new URLSearchParams({
                  grant_type: 'authorization_code',
                  code,
                  redirect_uri: CLIENT_REDIRECT,
                  client_id: clientId,
                  code_verifier: verifier,
                  resource: stepUp.resource,
                }).toString(),
              });
              assert.equal(answer.status, 200);
              return ((await answer.json()) as { access_token: string }).access_token;
            };
            const callStepUpTool = (token: string) =>
              plainRequest(stepUp.origin, '/mcp', {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${token}`,
                  'content-type': 'application/json',
                  accept: 'application/json, text/event-stream',
                },
                body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${STEP_UP_TOOL}","arguments":{}}}`,
              });
            try {
              const signedInAt = gatehouse.clock.now();
              const first = await authorize({}, () => signIn(page, alice.user.username, alice.password));
              assert.equal(decodeJwt(first).auth_time, signedInAt);
              assert.equal((await callStepUpTool(first)).status, 200);
              // Two minutes on: the sign-in is older than the tool accepts.
              gatehouse.clock.advance(120);
              const refused = await callStepUpTool(first);
              assert.equal(refused.status, 401);
              const challenge = String(refused.headers['www-authenticate']);
              assert.match(challenge, /error="insufficient_user_authentication"/);
              const maxAge = /max_age=(\d+)/.exec(challenge)?.[1];
              assert.equal(maxAge, '60');
              // The client asks again with the challenge's max_age: the signed-in user is asked to sign in
              // again, and says so on the page.
              const second = await authorize({ max_age: maxAge ?? '' }, async () => {
                await page.getByText('You signed in a while ago').waitFor();
                await signIn(page, alice.user.username, alice.password);
              });
              assert.equal(decodeJwt(second).auth_time, signedInAt + 120);
              const parsed = await signInDetails(stepUp.resource, second);
              assert.equal(parsed.auth_time, signedInAt + 120);
              assert.equal(parsed.acr, 'urn:gatehouse:acr:single-factor');
            } finally {
              await context.close();
            }
          } finally {
            stepUp.close();
          }
        });

        it('a token for another resource, or for none, is refused by the MCP server', async () => {
          const other = OTHER;
          await gatehouse.gatehouse.engine.resources.create({ uri: other, scopes: [MCP_SCOPE] });
          const { credentials } = await clientCredentialsToken(gatehouse, [MCP_SCOPE]);
          const tokenFor = async (resource: string | undefined) => {
            const form = {
              grant_type: 'client_credentials',
              ...(resource === undefined ? {} : { resource }),
            };
            return (await issueToken(gatehouse, form, credentials)).access_token;
          };
          const forOther = await tokenFor(other);
          assert.equal(decodeJwt(forOther).aud, other);
          const forNone = await tokenFor(undefined);
          assert.equal(decodeJwt(forNone).aud, issuer);
          for (const token of [forOther, forNone]) {
            const res = await plainRequest(mcp.origin, '/mcp', {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
            });
            assert.equal(res.status, 401);
            assert.match(
              String(res.headers['www-authenticate']),
              /resource_metadata="[^"]+", error="invalid_token"/,
            );
          }
          // The same client asking for this server's resource is admitted.
          assert.equal((await whoami(mcp.resource, await tokenFor(mcp.resource))).audience, mcp.resource);
        });
      });
    }
  },
);
