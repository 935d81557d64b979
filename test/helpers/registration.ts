import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { ClientInformation } from '../../src/core/clients/dynamic-registration.js';
import { TEST_DATABASE_URL, withSchemaLock } from './backends.js';
import type { HttpResponse } from './https-client.js';
import type { TestServer } from './server.js';
import { runCli, type RunResult } from './cli.js';

export const CALLBACK = 'https://app.example/cb';

/** POST /register with a JSON body and, when given, a bearer token. */
export function register(server: TestServer, metadata: unknown, token?: string): Promise<HttpResponse> {
  return server.http.request('/register', {
    method: 'POST',
    body: JSON.stringify(metadata),
    headers: {
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
  });
}

/** A registration that must succeed: its client information response. */
export async function registered(
  server: TestServer,
  metadata: unknown,
  token?: string,
): Promise<ClientInformation> {
  const res = await register(server, metadata, token);
  assert.equal(res.status, 201, res.text);
  return res.json as ClientInformation;
}

/** GET, PUT or DELETE on a client configuration endpoint (RFC 7592), with a bearer token when given. */
export function manage(
  server: TestServer,
  method: 'GET' | 'PUT' | 'DELETE',
  clientId: string,
  token: string | undefined,
  body?: unknown,
): Promise<HttpResponse> {
  return server.http.request(`/register/${encodeURIComponent(clientId)}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
  });
}

/** RFC 6750 §3.1: 401, a Bearer challenge, and the error code (none when no token came). */
export function assertBearerRefusal(res: HttpResponse, code: 'invalid_token' | undefined): void {
  assert.equal(res.status, 401, res.text);
  const challenge = String(res.headers['www-authenticate']);
  assert.match(challenge, /^Bearer realm="gatehouse"/);
  if (code === undefined) {
    assert.doesNotMatch(challenge, /error=/);
    assert.equal((res.json as { error?: string }).error, undefined);
  } else {
    assert.match(challenge, new RegExp(`error="${code}"`));
    assert.equal((res.json as { error?: string }).error, code);
  }
  assert.equal(res.headers['cache-control'], 'no-store');
}

/** RFC 7591 §3.2.2: 400 and the error code. */
export function assertMetadataRefusal(
  res: HttpResponse,
  code: 'invalid_client_metadata' | 'invalid_redirect_uri',
  description?: RegExp,
): void {
  assert.equal(res.status, 400, res.text);
  const body = res.json as { error: string; error_description: string };
  assert.equal(body.error, code, res.text);
  if (description !== undefined) assert.match(body.error_description, description);
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The test server's secret (helpers/server.ts), as the command line takes it. */
const SERVER_SECRET = Buffer.alloc(32, 7).toString('base64url');

/** Runs the command line on the test server's own store, as an operator beside the server would. */
export function cliOnServerStore(server: TestServer, args: string[]): Promise<RunResult> {
  const { store } = server;
  const where =
    store.backend === 'postgres'
      ? [
          '--database-url',
          `${TEST_DATABASE_URL ?? ''}${(TEST_DATABASE_URL ?? '').includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${store.schema ?? ''}`)}`,
        ]
      : ['--data-dir', store.dataDir];
  const run = () => runCli([...args, ...where], { env: { GATEHOUSE_SECRET: SERVER_SECRET } });
  // A command reading the migrations scans the catalog: it holds the lock schema drops take.
  return store.backend === 'postgres' ? withSchemaLock('shared', run) : run();
}
