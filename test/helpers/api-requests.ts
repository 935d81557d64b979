import assert from 'node:assert/strict';
import type { ClientInput } from '../../src/core/clients/client-registry.js';
import type { Client, User } from '../../src/core/model.js';
import { basicAuth, type HttpResponse } from './https-client.js';
import type { TestServer } from './server.js';

export interface Credentials {
  id: string;
  secret: string;
}

export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
  mac_key?: string;
  mac_algorithm?: string;
}

function describe(res: HttpResponse): string {
  return `status ${res.status}: ${res.text.slice(0, 400)}`;
}

export function expectStatus(res: HttpResponse, status: number): void {
  assert.equal(res.status, status, describe(res));
}

/** A token from POST /token, asserting success. */
export async function tokenFor(
  server: TestServer,
  form: Record<string, string>,
  credentials: Credentials,
): Promise<TokenBody> {
  const res = await server.http.token(form, credentials);
  expectStatus(res, 200);
  return res.json as TokenBody;
}

/** A client allowed the client_credentials grant, and an access token for it. */
export async function clientCredentialsToken(
  server: TestServer,
  scopes: string[],
  input: Partial<ClientInput> = {},
): Promise<{ client: Client; credentials: Credentials; token: TokenBody }> {
  const { client, secret } = await server.client({ grant_types: ['client_credentials'], scopes, ...input });
  const credentials = { id: client.id, secret };
  const token = await tokenFor(server, { grant_type: 'client_credentials' }, credentials);
  return { client, credentials, token };
}

/** A user, a password-grant client, and the access and refresh tokens of one login. */
export async function userToken(
  server: TestServer,
  scopes: string[],
  input: Partial<ClientInput> = {},
): Promise<{ client: Client; credentials: Credentials; user: User; token: TokenBody }> {
  const { client, secret } = await server.client({
    grant_types: ['password', 'refresh_token'],
    scopes,
    ...input,
  });
  const { user, password } = await server.user();
  const credentials = { id: client.id, secret };
  const token = await tokenFor(
    server,
    { grant_type: 'password', username: user.username, password },
    credentials,
  );
  assert.equal(typeof token.refresh_token, 'string');
  return { client, credentials, user, token };
}

export function bearer(token: TokenBody | string): Record<string, string> {
  return { authorization: `Bearer ${typeof token === 'string' ? token : token.access_token}` };
}

export function introspect(
  server: TestServer,
  credentials: Credentials,
  form: Record<string, string>,
): Promise<HttpResponse> {
  return server.http.request('/introspect', {
    form,
    headers: { authorization: basicAuth(credentials.id, credentials.secret) },
  });
}

export function revoke(
  server: TestServer,
  credentials: Credentials | { id: string },
  form: Record<string, string>,
): Promise<HttpResponse> {
  if ('secret' in credentials) {
    return server.http.request('/revoke', {
      form,
      headers: { authorization: basicAuth(credentials.id, credentials.secret) },
    });
  }
  return server.http.request('/revoke', { form: { ...form, client_id: credentials.id } });
}

/** POST /introspect, asserting 200, returning the body. */
export async function introspection(
  server: TestServer,
  credentials: Credentials,
  token: string,
  hint?: string,
): Promise<Record<string, unknown>> {
  const res = await introspect(server, credentials, {
    token,
    ...(hint === undefined ? {} : { token_type_hint: hint }),
  });
  expectStatus(res, 200);
  assert.equal(res.headers['cache-control'], 'no-store');
  return res.json as Record<string, unknown>;
}

/** A JSON problem (RFC 9457) with the given status; returns the body. */
export function assertProblem(res: HttpResponse, status: number, field?: string): Record<string, unknown> {
  expectStatus(res, status);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json(;|$)/);
  const body = res.json as Record<string, unknown>;
  assert.equal(body.status, status);
  assert.equal(typeof body.type, 'string');
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  if (field !== undefined) assert.equal(body.field, field, describe(res));
  return body;
}

/** JSON requests to /v1 with one access token. */
export function apiClient(server: TestServer, token: TokenBody | string | undefined) {
  const auth: Record<string, string> = token === undefined ? {} : bearer(token);
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    server.http.request(`/v1${path}`, {
      method,
      headers: {
        ...auth,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    get: (path: string, headers?: Record<string, string>) => send('GET', path, undefined, headers),
    post: (path: string, body?: unknown) => send('POST', path, body),
    put: (path: string, body: unknown) => send('PUT', path, body),
    patch: (path: string, body: unknown) => send('PATCH', path, body),
    delete: (path: string) => send('DELETE', path),
    send,
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** The path part of an absolute Location header. */
export function locationPath(res: HttpResponse): string {
  const location = res.headers.location;
  assert.equal(typeof location, 'string', 'Location header missing');
  return new URL(location as string).pathname;
}
