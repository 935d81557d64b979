import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWTPayload, type JWTVerifyResult } from 'jose';
import type { HttpResponse } from './https-client.js';
import type { TestServer } from './server.js';

export const ISSUER = 'https://gatehouse.test';

/** The body of a successful token response (RFC 6749 §5.1) plus Gatehouse's MAC fields. */
export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
  mac_key?: string;
  mac_algorithm?: string;
}

function describeResponse(res: HttpResponse): string {
  return `status ${res.status}: ${res.text.slice(0, 300)}`;
}

/** RFC 6749 §5.1: 200, JSON in UTF-8, never cached. Returns the body. */
export function assertTokenSuccess(res: HttpResponse): TokenBody {
  assert.equal(res.status, 200, describeResponse(res));
  assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
  const body = res.json as TokenBody;
  assert.equal(typeof body.access_token, 'string');
  assert.ok(body.access_token.length > 0);
  assert.equal(typeof body.token_type, 'string');
  assert.equal(typeof body.expires_in, 'number');
  return body;
}

/** RFC 6749 §5.2: the status, and a JSON body with exactly `error` and `error_description`. */
export function assertOAuthError(res: HttpResponse, status: number, error: string): void {
  assert.equal(res.status, status, describeResponse(res));
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json as Record<string, unknown> | undefined;
  assert.ok(body !== undefined, `error body is not JSON: ${res.text.slice(0, 200)}`);
  assert.equal(body.error, error, describeResponse(res));
  assert.equal(typeof body.error_description, 'string');
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  if (status === 401 && error === 'invalid_client') {
    assert.match(String(res.headers['www-authenticate']), /^Basic realm=/);
  }
}

/** A fresh RFC 7636 verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

export async function fetchJwks(server: TestServer): Promise<Parameters<typeof createLocalJWKSet>[0]> {
  const res = await server.http.request('/jwks');
  assert.equal(res.status, 200);
  return res.json as Parameters<typeof createLocalJWKSet>[0];
}

/** Verifies an access token as a resource server would (RFC 9068), at the server's clock. */
export async function verifyAccessToken(
  server: TestServer,
  token: string,
): Promise<JWTVerifyResult<JWTPayload>> {
  const jwks = await fetchJwks(server);
  return jwtVerify(token, createLocalJWKSet(jwks), {
    issuer: ISSUER,
    audience: ISSUER,
    typ: 'at+jwt',
    currentDate: new Date(server.clock.now() * 1000),
  });
}

/** The decoded JOSE header of a JWT, without verifying it. */
export function jwtHeader(token: string): Record<string, unknown> {
  const [header] = token.split('.');
  return JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Tallies response statuses: `{ 200: 1, 400: 19 }`. */
export function statusCounts(responses: HttpResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.status] = (counts[res.status] ?? 0) + 1;
  return counts;
}
