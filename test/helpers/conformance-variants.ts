import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
} from 'jose';
import type { Client, User } from '../../src/core/model.js';
import { hashPassword } from '../../src/core/users/passwords.js';
import type { Backend } from './backends.js';
import { browserSkip } from './chromium.js';
import { basicAuth, type HttpResponse } from './https-client.js';
import { startTestServer, type TestServer } from './server.js';
import {
  ISSUER,
  OTHER_REDIRECT_URI,
  POST_LOGOUT_REDIRECT_URI,
  REDIRECT_URI,
  RP_ORIGIN,
} from '../conformance/addresses.js';
import { BrowserAgent, type Chrome } from '../conformance/browser-agent.js';
import { FormAgent } from '../conformance/form-agent.js';
import type { AuthorizationOutcome, BrowserOptions, TestUser, UserAgent } from '../conformance/user-agent.js';

// The machinery of Gatehouse's own conformance suite: one OpenID Provider per store, a relying party
// (a real HTTPS server that records what the browser brings it), the user's browser (Chromium, or the
// form agent that submits the same pages without rendering them), and the checks the OpenID
// Foundation's conformance-suite modules make, written from the specifications.

export { browserSkip };
export { launchChrome, type Chrome } from '../conformance/browser-agent.js';
export {
  ISSUER,
  OTHER_REDIRECT_URI,
  POST_LOGOUT_REDIRECT_URI,
  REDIRECT_URI,
  RP_ORIGIN,
} from '../conformance/addresses.js';
export type {
  AuthorizationOutcome,
  RpRequest,
  TestUser,
  UserAgent,
  UserPage,
} from '../conformance/user-agent.js';

/** The OpenID Connect response types the certification profiles use (Core §3; Multiple Response Types §3). */
export type ResponseType =
  'code' | 'id_token' | 'id_token token' | 'code id_token' | 'code token' | 'code id_token token';
export type ResponseMode = 'default' | 'form_post';
export interface Variant {
  responseType: ResponseType;
  responseMode: ResponseMode;
}

export function parts(type: ResponseType): { code: boolean; idToken: boolean; token: boolean } {
  const names = type.split(' ');
  return {
    code: names.includes('code'),
    idToken: names.includes('id_token'),
    token: names.includes('token'),
  };
}

export const variantName = (variant: Variant): string =>
  `response_type=${variant.responseType}, response_mode=${variant.responseMode}`;

// ---------------------------------------------------------------------------------------------------
// The OpenID Provider under test and its relying parties.

export interface Rp {
  client: Client;
  secret: string;
}

export interface Op {
  backend: Backend;
  server: TestServer;
  chrome: Chrome;
  /** The relying party of most modules (client_secret_basic at the token endpoint). */
  rp: Rp;
  /** The relying party of oidcc-server-client-secret-post. */
  rpPost: Rp;
  /** The second client of the modules that need two (oidcc-refresh-token). */
  rp2: Rp;
  close(): Promise<void>;
}

const RP_REGISTRATION = {
  redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI],
  grant_types: ['authorization_code', 'implicit', 'refresh_token'],
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  post_logout_redirect_uris: [POST_LOGOUT_REDIRECT_URI],
};

/**
 * A Gatehouse on a fresh store with the relying parties registered as a conformance run registers
 * its static clients. The request rate limits are off: a conformance run is no abuse to limit.
 */
export async function startOp(backend: Backend, chrome: Chrome): Promise<Op> {
  const server = await startTestServer(
    backend,
    {
      rateLimits: {
        token: { perAddress: 0, perClient: 0 },
        authorize: { perAddress: 0, perClient: 0 },
        signIn: { perAddress: 0, perClient: 0 },
        revoke: { perAddress: 0, perClient: 0 },
        introspect: { perAddress: 0, perClient: 0 },
      },
    },
    { transport: 'https' },
  );
  try {
    const rp = await server.client({ name: 'Conformance RP', ...RP_REGISTRATION });
    const rpPost = await server.client({ name: 'Conformance RP (client_secret_post)', ...RP_REGISTRATION });
    const rp2 = await server.client({ name: 'Conformance RP 2', ...RP_REGISTRATION });
    return { backend, server, chrome, rp, rpPost, rp2, close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/**
 * The store on which the modules that check what only a browser does (modules.ts, withBrowser) run in
 * Chromium: SQLite, which every run has. On the other store they run with the form agent: what
 * Chromium does with Gatehouse's pages cannot differ by store, and the form agent sends the store's
 * OP the same requests, so the module's checks of the OP still run there.
 */
const BROWSER_BACKEND: Backend = 'sqlite';

/**
 * A new user's browser, with cookies of its own: the form agent (form-agent.ts), or for `browser`
 * Chromium on BROWSER_BACKEND.
 */
export async function newUserAgent(op: Op, kind: 'form' | 'browser' = 'form'): Promise<UserAgent> {
  if (kind === 'browser' && op.backend === BROWSER_BACKEND) return BrowserAgent.open(op.chrome);
  return new FormAgent(op.server);
}

const PASSWORD = 'correct horse battery staple';

/**
 * The hash of every test user's password, made once per process at the production cost (as
 * test/helpers/fakes/fixtures.ts does): each sign-in still verifies it as Gatehouse would, and none is
 * re-hashed, while a new user costs one insert instead of an argon2id hash.
 */
let passwordHash: Promise<string> | undefined;

let users = 0;

/** A new user with a name and an email address, so that profile and email have claims to release. */
export async function newUser(op: Op): Promise<TestUser> {
  users += 1;
  const username = `user${users}-${randomBytes(3).toString('hex')}`;
  passwordHash ??= hashPassword(PASSWORD);
  const now = op.server.clock.now();
  const user: User = {
    id: randomUUID(),
    username,
    passwordHash: await passwordHash,
    email: `${username}@example.com`,
    name: `User ${users}`,
    admin: false,
    emailVerified: false,
    createdAt: now,
    updatedAt: now,
  };
  assert.ok(await op.server.store.storage.users.insert(user), 'the user is new');
  return { user, password: PASSWORD };
}

export const randomValue = (bytes = 16): string => randomBytes(bytes).toString('base64url');

/** A state of exactly `length` characters, to see that the OP returns it uncorrupted. */
export const longState = (length = 128): string => randomBytes(length).toString('base64url').slice(0, length);

// ---------------------------------------------------------------------------------------------------
// Authorization requests.

export interface RequestInput {
  rp?: Rp;
  variant: Variant;
  scope?: string;
  /** null: no nonce parameter at all. */
  nonce?: string | null;
  state?: string;
  redirectUri?: string;
  extra?: Record<string, string>;
}

export interface AuthorizationRequest {
  params: Record<string, string>;
  state: string;
  nonce: string | null;
  rp: Rp;
  variant: Variant;
}

/** An authentication request as the modules build one (Core §3.1.2.1, §3.2.2.1, §3.3.2.1). */
export function authorizationRequest(op: Op, input: RequestInput): AuthorizationRequest {
  const rp = input.rp ?? op.rp;
  const state = input.state ?? randomValue();
  const nonce = input.nonce === undefined ? randomValue() : input.nonce;
  const params: Record<string, string> = {
    client_id: rp.client.id,
    redirect_uri: input.redirectUri ?? REDIRECT_URI,
    response_type: input.variant.responseType,
    scope: input.scope ?? 'openid',
    state,
    ...(nonce === null ? {} : { nonce }),
    ...(input.variant.responseMode === 'form_post' ? { response_mode: 'form_post' } : {}),
    ...input.extra,
  };
  return { params, state, nonce, rp, variant: input.variant };
}

export function authorizeUrl(op: Op, params: Record<string, string>): string {
  return `${op.server.url}/authorize?${new URLSearchParams(params).toString()}`;
}

/**
 * The response's parameters from where the response mode puts them, with what the modules check of
 * the delivery: the query for the code flow, the fragment for every other type (Multiple Response
 * Types §5; RejectAuthCodeInUrlQuery, RejectErrorInUrlQuery), a POST of an urlencoded form with an
 * empty query for form_post (Form Post Response Mode §2).
 */
export function responseParams(outcome: AuthorizationOutcome, variant: Variant): URLSearchParams {
  const { callback } = outcome;
  assert.equal(new URL(callback.url, RP_ORIGIN).pathname, new URL(REDIRECT_URI).pathname);
  if (variant.responseMode === 'form_post') {
    assert.equal(callback.method, 'POST', 'Form Post §2: the response is POSTed');
    assert.match(callback.contentType ?? '', /^application\/x-www-form-urlencoded/);
    assert.equal(new URL(callback.url, RP_ORIGIN).search, '', 'nothing in the query');
    assert.equal(outcome.landed.hash, '', 'nothing in the fragment');
    return outcome.form;
  }
  assert.equal(callback.method, 'GET');
  if (variant.responseType === 'code') {
    assert.equal(outcome.landed.hash, '', 'Core §3.1.2.5: the code flow answers in the query');
    return outcome.query;
  }
  assert.equal(outcome.query.get('code'), null, 'Core §3.3.2.5: no code in the query');
  assert.equal(outcome.query.get('error'), null, 'Multiple Response Types §5: no error in the query');
  assert.equal(outcome.landed.search, '', 'Multiple Response Types §5: nothing in the query');
  return outcome.fragment;
}

/**
 * What every module checks of a successful authorization response: no error, state returned as sent,
 * `iss` (RFC 9207 §2) the issuer where present, and the parts of the response type.
 */
export function checkSuccessResponse(params: URLSearchParams, request: AuthorizationRequest): void {
  assert.equal(params.get('error'), null, `an error came back: ${params.toString()}`);
  assert.equal(params.get('state'), request.state, 'RFC 6749 §4.1.2: state returned unchanged');
  if (params.has('iss')) assert.equal(params.get('iss'), ISSUER, 'RFC 9207 §2');
  const expected = parts(request.variant.responseType);
  assert.equal(params.has('code'), expected.code, 'a code exactly when the response type has one');
  assert.equal(params.has('id_token'), expected.idToken, 'an ID token exactly when asked for');
  assert.equal(params.has('access_token'), expected.token, 'an access token exactly when asked for');
  if (expected.token) {
    assert.equal(params.get('token_type')?.toLowerCase(), 'bearer', 'RFC 6750: a bearer token');
    const expiresIn = Number(params.get('expires_in'));
    assert.ok(Number.isInteger(expiresIn) && expiresIn > 0, 'RFC 6749 §4.2.2: expires_in');
  }
}

/**
 * What the modules check of an error response (performGenericAuthorizationEndpointErrorResponseValidation):
 * the error code, state returned, no code alongside, only the parameters an error response has,
 * error_description and error_uri of the allowed characters (RFC 6749 §4.1.2.1).
 */
export function checkErrorResponse(
  params: URLSearchParams,
  state: string | undefined,
  errors: string[],
): void {
  const error = params.get('error');
  assert.ok(
    error !== null && errors.includes(error),
    `expected ${errors.join(' or ')}, got ${params.toString()}`,
  );
  assert.equal(params.get('state'), state ?? null, 'Core §3.1.2.6: state returned unchanged');
  assert.equal(params.get('code'), null, 'no code beside an error');
  for (const name of params.keys()) {
    assert.ok(
      ['error', 'error_description', 'error_uri', 'state', 'iss'].includes(name),
      `unexpected ${name}`,
    );
  }
  if (params.has('iss')) assert.equal(params.get('iss'), ISSUER, 'RFC 9207 §2');
  // RFC 6749 §4.1.2.1: %x20-21 / %x23-5B / %x5D-7E.
  const description = params.get('error_description');
  if (description !== null) assert.match(description, /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
}

/** A redirect straight back (no page): the parameters of its Location, from the query or the fragment. */
export function redirectParams(res: HttpResponse, where: 'query' | 'fragment'): URLSearchParams {
  assert.equal(res.status, 302, `expected a redirect, got ${res.status}: ${res.text.slice(0, 200)}`);
  const location = new URL(String(res.headers.location));
  assert.equal(location.origin + location.pathname, REDIRECT_URI);
  if (where === 'fragment') {
    assert.equal(location.search, '', 'nothing in the query');
    return new URLSearchParams(location.hash.slice(1));
  }
  assert.equal(location.hash, '');
  return location.searchParams;
}

/** The fields of a form_post page (the page itself, fetched without a browser). */
export function formPostFields(res: HttpResponse): { action: string; fields: URLSearchParams } {
  assert.equal(res.status, 200, res.text.slice(0, 200));
  const action = /<form method="post" action="([^"]+)"/.exec(res.text)?.[1] ?? '';
  const fields = new URLSearchParams();
  for (const match of res.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields.append(match[1] ?? '', unescapeHtml(match[2] ?? ''));
  }
  return { action: unescapeHtml(action), fields };
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * An error answered without a user: the parameters of the redirect, or of the form_post page, from
 * where the response mode puts them.
 */
export function errorParams(res: HttpResponse, variant: Variant): URLSearchParams {
  if (variant.responseMode === 'form_post') {
    const { action, fields } = formPostFields(res);
    assert.equal(action, REDIRECT_URI);
    return fields;
  }
  return redirectParams(res, variant.responseType === 'code' ? 'query' : 'fragment');
}

// ---------------------------------------------------------------------------------------------------
// ID tokens.

export interface IdToken {
  raw: string;
  header: ReturnType<typeof decodeProtectedHeader>;
  claims: JWTPayload & Record<string, unknown>;
}

export async function jwks(op: Op): Promise<JSONWebKeySet> {
  const res = await op.server.http.request('/jwks');
  assert.equal(res.status, 200);
  return res.json as JSONWebKeySet;
}

/** Core §3.3.2.11: base64url of the left half of the SHA-256 of the ASCII octets (RS256, ES256). */
export function leftHalfHash(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest().subarray(0, 16).toString('base64url');
}

const STRING_CLAIMS = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'email',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
];

/** Core §5.1 (ValidateIdTokenStandardClaims, ValidateUserInfoStandardClaims): each claim's JSON type. */
export function checkStandardClaimTypes(claims: Record<string, unknown>, now: number): void {
  for (const name of STRING_CLAIMS) {
    if (name in claims) assert.equal(typeof claims[name], 'string', `Core §5.1: ${name} is a string`);
  }
  for (const name of ['email_verified', 'phone_number_verified']) {
    if (name in claims) assert.equal(typeof claims[name], 'boolean', `Core §5.1: ${name} is a boolean`);
  }
  if ('address' in claims) assert.equal(typeof claims.address, 'object', 'Core §5.1.1: address is an object');
  if ('updated_at' in claims) {
    const updatedAt = claims.updated_at;
    assert.ok(
      typeof updatedAt === 'number' && Number.isInteger(updatedAt),
      'Core §5.1: updated_at is a number',
    );
    assert.ok(updatedAt <= now + 300, 'updated_at is not in the future');
  }
  if ('birthdate' in claims) assert.match(String(claims.birthdate), /^\d{4}(-\d{2}-\d{2})?$/);
}

export interface IdTokenExpectations {
  rp: Rp;
  /** The nonce of the request; null when it had none. */
  nonce: string | null;
  /** The JWS algorithm the client registered (RS256 by default, Core §15.1). */
  alg?: 'RS256' | 'ES256';
}

/**
 * Core §3.1.3.7 and §2, as PerformStandardIdTokenChecks and OIDCCIdTokenSignature check them: signed
 * with the key of the header's `kid` from jwks_uri with the client's algorithm, `iss` the issuer, `aud`
 * the client (and `azp` it where present), `exp` and `iat` about now, `auth_time` not in the future and
 * within a year, `sub` present, `nonce` exactly the request's, `acr` never empty, the standard claims of
 * their types.
 */
export async function checkIdToken(
  op: Op,
  raw: string | null | undefined,
  expect: IdTokenExpectations,
): Promise<IdToken> {
  assert.ok(raw, 'an ID token');
  const header = decodeProtectedHeader(raw);
  const alg = expect.alg ?? 'RS256';
  assert.equal(header.alg, alg, 'Core §3.1.3.7 step 7: the registered algorithm (RS256 by default)');
  assert.ok(typeof header.kid === 'string' && header.kid.length > 0, 'Core §10.1: a kid in the header');
  const keys = await jwks(op);
  const key = keys.keys.find((candidate) => candidate.kid === header.kid);
  assert.ok(key, 'the kid names a key of jwks_uri');
  assert.equal(key.alg, alg);
  const now = op.server.clock.now();
  const { payload } = await jwtVerify(raw, createLocalJWKSet(keys), {
    issuer: ISSUER,
    audience: expect.rp.client.id,
    algorithms: [alg],
    currentDate: new Date(now * 1000),
  });
  const claims = payload as JWTPayload & Record<string, unknown>;
  assert.equal(typeof claims.sub, 'string', 'Core §2: sub');
  assert.ok(
    String(claims.sub).length > 0 && String(claims.sub).length <= 255,
    'Core §2: sub of 1 to 255 characters',
  );
  assert.equal(claims.aud, expect.rp.client.id, 'Core §2: aud is the client');
  if (claims.azp !== undefined) assert.equal(claims.azp, expect.rp.client.id, 'Core §3.1.3.7 step 5');
  assert.equal(typeof claims.exp, 'number', 'Core §2: exp');
  assert.ok(Number(claims.exp) > now, 'not expired');
  assert.equal(typeof claims.iat, 'number', 'Core §2: iat');
  assert.ok(Math.abs(Number(claims.iat) - now) <= 300, 'iat within five minutes of now');
  if (claims.auth_time !== undefined) {
    assert.equal(typeof claims.auth_time, 'number', 'Core §2: auth_time is a number');
    assert.ok(Number(claims.auth_time) <= now + 300, 'auth_time is not in the future');
    assert.ok(Number(claims.auth_time) >= now - 365 * 86400, 'auth_time is within a year');
  }
  if (expect.nonce === null) assert.equal(claims.nonce, undefined, 'no nonce was sent, none comes back');
  else assert.equal(claims.nonce, expect.nonce, 'Core §3.1.3.7 step 11: the request’s nonce');
  if (claims.acr !== undefined) assert.notEqual(claims.acr, '', 'acr is never empty');
  checkStandardClaimTypes(claims, now);
  return { raw, header, claims };
}

// ---------------------------------------------------------------------------------------------------
// The token endpoint and UserInfo.

export type ClientAuthentication = 'client_secret_basic' | 'client_secret_post';

export interface TokenResponseBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

/** POST /token with the client authenticated as `auth` (RFC 6749 §2.3.1). */
export function tokenRequest(
  op: Op,
  rp: Rp,
  form: Record<string, string>,
  auth: ClientAuthentication = 'client_secret_basic',
): Promise<HttpResponse> {
  if (auth === 'client_secret_post') {
    return op.server.http.request('/token', {
      form: { ...form, client_id: rp.client.id, client_secret: rp.secret },
    });
  }
  return op.server.http.request('/token', {
    form,
    headers: { authorization: basicAuth(rp.client.id, rp.secret) },
  });
}

/** RFC 6749 §5.1 and Core §3.1.3.3: 200, JSON, not cached, a bearer token with its lifetime. */
export function checkTokenResponse(res: HttpResponse): TokenResponseBody {
  assert.equal(res.status, 200, `token endpoint: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-store', 'Core §3.1.3.3: Cache-Control no-store');
  const body = res.json as TokenResponseBody;
  assert.ok(typeof body.access_token === 'string' && body.access_token.length > 0);
  assert.match(body.access_token, /^[\x20-\x7e]+$/, 'RFC 6749 §A.12: access token characters');
  assert.equal(body.token_type.toLowerCase(), 'bearer', 'Core §3.1.3.3: token_type Bearer');
  assert.ok(Number.isInteger(body.expires_in) && body.expires_in > 0, 'RFC 6749 §5.1: expires_in');
  return body;
}

/** RFC 6749 §5.2: 400, JSON, the error code, a description of the allowed characters. */
export function checkTokenError(res: HttpResponse, error: string): void {
  assert.equal(res.status, 400, `token endpoint: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json as { error?: string; error_description?: string; error_uri?: string };
  assert.equal(body.error, error);
  if (body.error_description !== undefined) {
    assert.match(body.error_description, /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, 'RFC 6749 §5.2');
  }
}

/** GET /userinfo with the bearer token in the header (Core §5.3.1; RFC 6750 §2.1). */
export function userInfo(
  op: Op,
  accessToken: string,
  how: 'get' | 'post-header' | 'post-body' = 'get',
): Promise<HttpResponse> {
  if (how === 'get') {
    return op.server.http.request('/userinfo', { headers: { authorization: `Bearer ${accessToken}` } });
  }
  if (how === 'post-header') {
    return op.server.http.request('/userinfo', {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}` },
    });
  }
  return op.server.http.request('/userinfo', { method: 'POST', form: { access_token: accessToken } });
}

/** Core §5.3.2: 200, JSON, sub present; the standard claims of their types. */
export function checkUserInfo(op: Op, res: HttpResponse): Record<string, unknown> {
  assert.equal(res.status, 200, `userinfo: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const claims = res.json as Record<string, unknown>;
  assert.equal(typeof claims.sub, 'string', 'Core §5.3.2: sub is always returned');
  checkStandardClaimTypes(claims, op.server.clock.now());
  return claims;
}

/** A request to UserInfo with a token that must no longer work (RFC 6750 §3.1: 401 invalid_token). */
export async function checkUserInfoRefused(op: Op, accessToken: string): Promise<void> {
  const res = await userInfo(op, accessToken);
  assert.equal(res.status, 401, `userinfo: ${res.status} ${res.text.slice(0, 200)}`);
  assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
}

/**
 * Shannon entropy of a string in bits (character frequencies times length), as the modules estimate
 * the entropy of codes and tokens (EnsureMinimumAuthorizationCodeEntropy).
 */
export function entropyBits(value: string): number {
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let perChar = 0;
  for (const count of counts.values()) {
    const p = count / value.length;
    perChar -= p * Math.log2(p);
  }
  return perChar * value.length;
}

// ---------------------------------------------------------------------------------------------------
// The complete flow of OIDCCServerTest, which most modules run and then add to.

export interface FlowInput
  extends Omit<RequestInput, 'variant'>, Pick<BrowserOptions, 'onSignInPage' | 'method'> {
  /** The user's browser (the same one again for a second authorization in the same browser). */
  agent: UserAgent;
  user?: TestUser;
  auth?: ClientAuthentication;
  /** RFC 7636 code_verifier to send at the token endpoint (its challenge goes in `extra`). */
  codeVerifier?: string;
  consent?: 'allow' | 'deny';
}

export interface FlowResult {
  agent: UserAgent;
  user: TestUser;
  request: AuthorizationRequest;
  outcome: AuthorizationOutcome;
  params: URLSearchParams;
  /** The ID token of the authorization endpoint, checked. */
  authorizationIdToken: IdToken | undefined;
  /** The ID token of the token endpoint, checked. */
  tokenIdToken: IdToken | undefined;
  /** The access token of the authorization endpoint (a type with `token`). */
  authorizationAccessToken: string | undefined;
  /** The token endpoint's answer (a type with `code`). */
  tokens: TokenResponseBody | undefined;
  /** The access token a relying party would use now: the token endpoint's, else the authorization endpoint's. */
  accessToken: string | undefined;
  /** The ID token a relying party would keep: the token endpoint's, else the authorization endpoint's. */
  idToken: IdToken;
}

/**
 * OIDCCServerTest's flow for a variant: the authentication request in the user's browser (sign-in
 * and consent as they come), the response where its mode puts it; the ID token of the authorization endpoint with
 * at_hash required beside an access token and c_hash beside a code (Core §3.3.2.11), the code's length
 * and entropy (RFC 6749 §10.10); the code at the token endpoint, its ID token checked (and at_hash,
 * c_hash where present), the same sub as the first (Core §3.3.3.6); UserInfo answering each access
 * token (CallProtectedResource).
 */
export async function serverFlow(op: Op, variant: Variant, input: FlowInput): Promise<FlowResult> {
  const { agent } = input;
  const user = input.user ?? (await newUser(op));
  const request = authorizationRequest(op, { ...input, variant });
  const outcome = await agent.browse(authorizeUrl(op, request.params), {
    user,
    ...(input.consent ? { consent: input.consent } : {}),
    ...(input.onSignInPage ? { onSignInPage: input.onSignInPage } : {}),
    ...(input.method ? { method: input.method } : {}),
  });
  const params = responseParams(outcome, variant);
  checkSuccessResponse(params, request);
  const expected = parts(variant.responseType);
  const expectations: IdTokenExpectations = {
    rp: request.rp,
    nonce: request.nonce,
    alg: request.rp.client.idTokenSignedResponseAlg,
  };

  let authorizationIdToken: IdToken | undefined;
  if (expected.idToken) {
    authorizationIdToken = await checkIdToken(op, params.get('id_token'), expectations);
    const claims = authorizationIdToken.claims;
    if (expected.token)
      assert.equal(claims.at_hash, leftHalfHash(params.get('access_token') ?? ''), 'at_hash');
    else assert.equal(claims.at_hash, undefined, 'no at_hash without an access token');
    if (expected.code) assert.equal(claims.c_hash, leftHalfHash(params.get('code') ?? ''), 'c_hash');
    else assert.equal(claims.c_hash, undefined, 'no c_hash without a code');
  }

  const authorizationAccessToken = params.get('access_token') ?? undefined;
  if (authorizationAccessToken !== undefined) {
    checkUserInfo(op, await userInfo(op, authorizationAccessToken));
  }

  let tokens: TokenResponseBody | undefined;
  let tokenIdToken: IdToken | undefined;
  if (expected.code) {
    const code = params.get('code') ?? '';
    assert.ok(Buffer.byteLength(code) * 8 >= 128, 'RFC 6749 §10.10: a code of at least 128 bits');
    assert.ok(entropyBits(code) >= 96, 'RFC 6749 §10.10: a code of enough entropy');
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: request.params.redirect_uri ?? REDIRECT_URI,
      ...(input.codeVerifier !== undefined ? { code_verifier: input.codeVerifier } : {}),
    };
    tokens = checkTokenResponse(await tokenRequest(op, request.rp, form, input.auth));
    tokenIdToken = await checkIdToken(op, tokens.id_token, expectations);
    const claims = tokenIdToken.claims;
    // Core §3.3.3.6: at_hash and c_hash are optional here, right where present.
    if (claims.at_hash !== undefined) assert.equal(claims.at_hash, leftHalfHash(tokens.access_token));
    if (claims.c_hash !== undefined) assert.equal(claims.c_hash, leftHalfHash(code));
    if (authorizationIdToken !== undefined) {
      assert.equal(
        claims.sub,
        authorizationIdToken.claims.sub,
        'Core §3.3.3.6: the same sub from both endpoints',
      );
      assert.equal(claims.iss, authorizationIdToken.claims.iss);
    }
    checkUserInfo(op, await userInfo(op, tokens.access_token));
  }
  const idToken = tokenIdToken ?? authorizationIdToken;
  assert.ok(idToken, 'an ID token from one endpoint or the other');
  return {
    agent,
    user,
    request,
    outcome,
    params,
    authorizationIdToken,
    tokenIdToken,
    authorizationAccessToken,
    tokens,
    accessToken: tokens?.access_token ?? authorizationAccessToken,
    idToken,
  };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
