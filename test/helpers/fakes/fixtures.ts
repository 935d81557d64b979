import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import { decodeJwt } from 'jose';
import { InvalidAccessTokenError } from '../../../src/core/tokens/access-token-validation.js';
import { OAuthError, type OAuthErrorCode } from '../../../src/core/errors.js';
import type { AuthorizationCode, Client, Grant, User } from '../../../src/core/model.js';
import { hashPassword } from '../../../src/core/users/passwords.js';
import type { TokenEndpointRequest } from '../../../src/core/token-endpoint/token-endpoint.js';
import { oauthErrorHandler } from '../../../src/http/oauth/oauth-errors.js';
import { randomToken, sha256 } from '../../../src/shared/crypto.js';
import type { TestEngine } from './test-engine.js';

/** Records as the tests set them up, written straight into the store through its port. */

export const REDIRECT = 'https://app.example/callback';
export const PASSWORD = 'correct horse battery';

/** A client with a known secret (`secret-of-<id>` unless given), confidential unless `isPublic`. */
export async function addClient(
  engine: Pick<TestEngine, 'storage' | 'clock'>,
  { secret: given, ...fields }: Partial<Client> & { secret?: string } = {},
): Promise<{ client: Client; secret: string }> {
  const now = engine.clock.now();
  const id = fields.id ?? `client-${randomUUID().slice(0, 8)}`;
  const isPublic = fields.isPublic ?? false;
  const secret = given ?? `secret-of-${id}`;
  const client: Client = {
    id,
    name: 'test client',
    secretHash: isPublic ? null : sha256(secret),
    redirectUris: [REDIRECT],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['read', 'write'],
    tokenType: 'bearer',
    isPublic,
    idTokenSignedResponseAlg: 'RS256',
    postLogoutRedirectUris: [],
    tokenEndpointAuthMethod: isPublic ? 'none' : 'client_secret_basic',
    jwks: null,
    jwksUri: null,
    registration: 'operator',
    registrationAccessTokenHash: null,
    registrationScopes: null,
    firstGrantedAt: null,
    documentExpiresAt: null,
    requirePushedAuthorizationRequests: false,
    dpopBoundAccessTokens: false,
    requireMfa: false,
    identityProviders: null,
    tokenExchangeTargets: [],
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  await engine.storage.clients.insert(client);
  return { client, secret };
}

// One argon2id hash per password for the whole test process: hashing is the slow part of a user.
const hashes = new Map<string, Promise<string>>();

/** A user whose password is hashed as the registry hashes it (argon2id at today's cost). */
export async function addUser(
  engine: Pick<TestEngine, 'storage' | 'clock'>,
  username = `user-${randomUUID().slice(0, 8)}`,
  password = PASSWORD,
): Promise<User> {
  let hash = hashes.get(password);
  if (hash === undefined) {
    hash = hashPassword(password);
    hashes.set(password, hash);
  }
  const now = engine.clock.now();
  const user: User = {
    id: randomUUID(),
    username,
    passwordHash: await hash,
    email: null,
    name: null,
    admin: false,
    emailVerified: false,
    disabled: false,
    createdAt: now,
    updatedAt: now,
  };
  assert.ok(await engine.storage.users.insert(user));
  return user;
}

export interface SeedCodeOptions {
  redirectUri?: string;
  scope?: string[];
  codeChallenge?: string | null;
  codeChallengeMethod?: AuthorizationCode['codeChallengeMethod'];
  grantExpiresAt?: number | null;
  /** What the authorization endpoint records for an OpenID Connect request (Core §3.1.2.1, §2). */
  nonce?: string | null;
  authTime?: number | null;
  sid?: string | null;
  /** The resources the authorization request named (RFC 8707), canonical URIs. */
  resources?: string[];
  /** The authorization request's dpop_jkt (RFC 9449 §10). */
  dpopJkt?: string | null;
}

/** A grant and an authorization code issued under it, as the consent page leaves them. */
export async function seedCode(
  engine: TestEngine,
  client: Client,
  user: User,
  options: SeedCodeOptions = {},
): Promise<{ code: string; grant: Grant }> {
  const now = engine.clock.now();
  const scope = options.scope ?? client.scopes;
  const grant: Grant = {
    id: randomUUID(),
    clientId: client.id,
    userId: user.id,
    scope,
    createdAt: now,
    expiresAt: options.grantExpiresAt ?? null,
    revokedAt: null,
  };
  await engine.storage.grants.insert(grant);
  const code = randomToken('ac_');
  await engine.storage.codes.insert({
    hash: sha256(code),
    clientId: client.id,
    userId: user.id,
    grantId: grant.id,
    redirectUri: options.redirectUri ?? client.redirectUris[0] ?? '',
    scope,
    codeChallenge: options.codeChallenge ?? null,
    codeChallengeMethod: options.codeChallengeMethod ?? null,
    createdAt: now,
    expiresAt: now + engine.config.authorizationCodeTtl,
    consumedAt: null,
    nonce: options.nonce ?? null,
    authTime: options.authTime ?? null,
    sid: options.sid ?? null,
    resources: options.resources ?? [],
    dpopJkt: options.dpopJkt ?? null,
  });
  return { code, grant };
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded, joined with a colon, then base64-encoded. */
export function basic(id: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

/** A token request authenticated with HTTP Basic. */
export function withBasic(
  client: { id: string },
  secret: string,
  params: Record<string, string | undefined>,
): TokenEndpointRequest {
  return { authorization: basic(client.id, secret), params };
}

/** A fresh RFC 7636 verifier and its S256 challenge, computed independently of src/core/authorize/pkce.ts. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface ExpectedError {
  code: OAuthErrorCode;
  status: number;
  /** The error_description, where it is part of the contract. */
  description?: string | RegExp;
}

/** Awaits `promise` and asserts it failed with this OAuth error (RFC 6749 §5.2 code, HTTP status). */
export async function expectOAuthError(
  promise: Promise<unknown>,
  expected: ExpectedError,
): Promise<OAuthError> {
  let error: unknown;
  try {
    const result = await promise;
    assert.fail(`expected ${expected.code}, got a result: ${JSON.stringify(result).slice(0, 200)}`);
  } catch (caught) {
    error = caught;
  }
  if (!(error instanceof OAuthError)) throw error;
  assert.equal(error.code, expected.code, error.message);
  assert.equal(error.status, expected.status, error.message);
  if (typeof expected.description === 'string') assert.equal(error.description, expected.description);
  else if (expected.description !== undefined) assert.match(error.description, expected.description);
  return error;
}

/** The claims of an access token, after checking that the engine's own validator accepts it as live. */
export async function liveClaims(engine: TestEngine, accessToken: string): Promise<JWTPayload> {
  await engine.tokens.validator.validate(accessToken);
  return decodeJwt(accessToken);
}

/** Whether the engine's validator still accepts the token (its grant stands, it is not revoked). */
export async function isLive(engine: TestEngine, accessToken: string): Promise<boolean> {
  try {
    await engine.tokens.validator.validate(accessToken);
    return true;
  } catch (error) {
    if (error instanceof InvalidAccessTokenError) return false;
    throw error;
  }
}

/** What the token endpoint sends for an error: src/http/oauth/oauth-errors.ts on a recording reply. */
export function wireAnswer(error: OAuthError): {
  status: number;
  headers: Record<string, string>;
  body: unknown;
} {
  const sent = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
  const reply = {
    code(status: number) {
      sent.status = status;
      return reply;
    },
    header(name: string, value: string) {
      sent.headers[name] = value;
      return reply;
    },
    send(payload: string) {
      sent.body = JSON.parse(payload);
      return reply;
    },
  };
  const request = { log: { warn: () => undefined, error: () => undefined } };
  oauthErrorHandler.call(
    undefined,
    error,
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply,
  );
  return sent;
}
