import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { createMcpExample, MCP_SCOPE, type WhoAmI } from '../../examples/mcp-server.js';
import { clientCredentialsToken } from '../api/support.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { plainRequest } from '../resource-server/support.js';
import { freePort } from '../ops/support/spawned-server.js';

// examples/mcp-server.ts: an MCP server (the SDK's Streamable HTTP transport) behind the
// resource-server library, with RFC 9728 metadata naming Gatehouse.

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The example on a free loopback port, its resource being its own /mcp URL. */
async function startMcpExample(gatehouse: TestServer, issuer: string) {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const example = createMcpExample({
    issuer,
    resource,
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
      ['whoami'],
    );
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return result.structuredContent as unknown as WhoAmI;
  } finally {
    await client.close();
  }
}

for (const backend of backends()) {
  describe(`examples/mcp-server with the MCP SDK's client (${backend})`, () => {
    let gatehouse: TestServer;
    let mcp: Awaited<ReturnType<typeof startMcpExample>>;
    before(async () => {
      gatehouse = await startTestServer(backend);
      mcp = await startMcpExample(gatehouse, 'https://gatehouse.test');
    });
    after(async () => {
      mcp?.close();
      await gatehouse?.close();
    });

    /** A token of Gatehouse's key ring addressed to `aud`, as Gatehouse issues for `resource` (RFC 8707). */
    async function tokenFor(aud: string | string[], scopes = [MCP_SCOPE]) {
      const { client, token } = await clientCredentialsToken(gatehouse, scopes);
      const claims = decodeJwt(token.access_token);
      return { client, token: gatehouse.gatehouse.keyRing.signJwt({ ...claims, aud, jti: randomUUID() }) };
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
      const other = (await tokenFor('https://other.example/api')).token;
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
