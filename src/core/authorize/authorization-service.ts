import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import { randomToken, sha256 } from '../../shared/crypto.js';
import { adminOnly, ADMIN_SCOPE, scopeForUser } from '../scopes/admin-scope.js';
import type { DpopVerifier } from '../tokens/dpop.js';
import { dpopProofError, invalidRequest, OAuthError } from '../errors.js';
import { isGrantLive } from '../grants/liveness.js';
import type { IdTokenHint } from '../tokens/id-token-hint.js';
import type { IdTokenInput } from '../tokens/id-token.js';
import type { Client, Grant } from '../model.js';
import type { Storage } from '../ports.js';
import type { ResourceTargets } from '../scopes/resources.js';
import { isSubset } from '../scopes/scopes.js';
import {
  reportedAcr,
  unreachable,
  unsatisfied,
  weakestAcrAsked,
  type Authentication,
  type SignedIn,
} from '../sign-in/assurance.js';
import { SIGN_IN_METHODS } from '../sign-in/methods.js';
import type { RefreshAuthentication, TokenIssuer, TokenResponse } from '../tokens/token-issuer.js';
import { GRANT_LIFETIMES, recordConsent, type ConsentDecision } from './consent.js';
import {
  CLIENT_AUTHENTICATION_PARAMS,
  newPushedRequestUri,
  pushedRequestHash,
  PUSHED_REQUEST_FLOW_SECONDS,
} from './pushed-requests.js';
import {
  responseParts,
  validateAuthorizationRequest,
  type AuthorizationPolicy,
  type AuthorizationRequest,
  type AuthorizationValidation,
  type OpenedPushedRequest,
} from './request.js';
import { authorizationErrorResponse, authorizationResponse, type AuthorizationResponse } from './response.js';

export { GRANT_LIFETIMES, type ConsentDecision } from './consent.js';

/** What an ID token of the authorization endpoint is made from (Core §2, §3.2.2.10, §3.3.2.11). */
export type IdTokenRequest = Omit<IdTokenInput, 'now'>;

/** The engine's ID token issuer, as the authorization endpoint uses it. */
export interface IdTokenMinter {
  issue(input: IdTokenRequest): Promise<string>;
}

const isAuthentication = (session: SignedIn | undefined): session is Authentication =>
  session !== undefined && 'authTime' in session;

export interface AuthorizationServiceOptions {
  storage: Pick<Storage, 'clients' | 'grants' | 'codes' | 'pushedRequests' | 'users'>;
  /** Where a consent that makes a grant is recorded, with the grant (decision 41). */
  audit?: AuditLog;
  issuer: TokenIssuer;
  /** The issuer identifier, `iss` of every authorization response (RFC 9207 §2). */
  issuerIdentifier: string;
  clock: Clock;
  authorizationCodeTtl: number;
  /** RFC 7636 §4.2 "plain" challenges; off unless the operator turns them on. */
  allowPlainPkce?: boolean;
  /** Checks an `id_token_hint` (Core §3.1.2.1); without it every hint is refused. */
  verifyIdTokenHint?: (token: string) => Promise<IdTokenHint | undefined>;
  /** Issues the ID tokens of OpenID Connect responses; without it none can be answered. */
  idTokens?: IdTokenMinter;
  /** The registered resources `resource` may name (RFC 8707); without it every one is refused. */
  resources?: ResourceTargets;
  /** RFC 9126 §2.2 `expires_in`: seconds a pushed request may wait for its /authorize (at most 90). */
  pushedRequestTtl: number;
  /** RFC 9126 §5: every client's /authorize must come through the pushed authorization request endpoint. */
  requirePushedRequests?: boolean;
  /**
   * RFC 9449 §10.1: the proof rules, and the pushed authorization request endpoint's URL that a proof
   * sent there must name. Without it a DPoP header at /par is refused.
   */
  dpop?: { verifier: DpopVerifier; parEndpointUrl: string };
}

/** The pushed authorization request endpoint's answer (RFC 9126 §2.2). */
export interface PushedRequestResponse {
  request_uri: string;
  expires_in: number;
}

/**
 * A pushed request (RFC 9126) whose answer was already produced, or that expired while the user was
 * on the way: no second answer is given. The browser pages show an error page (no redirect: the
 * client gets one answer per request).
 */
export class PushedRequestSpentError extends Error {
  constructor() {
    super('the pushed authorization request was already answered, or expired');
    this.name = 'PushedRequestSpentError';
  }
}

/** What answering an authorization request needs next, given who is signed in (see next()). */
export type AuthorizationStep =
  /**
   * A sign-in: nobody is signed in, or the request wants a fresh one (prompt=login, max_age), or a
   * stronger one (`acr`: acr_values or the claims parameter's acr, decision 36; `acr` then names the
   * weakest value that will do). `methods` names the AuthenticationMethods that may satisfy it
   * (decision 30; today the password).
   */
  | {
      step: 'sign-in';
      reason: SignInReason;
      methods: readonly string[];
      acr?: string;
    }
  /** prompt=select_account: continue as the signed-in user, or sign in as someone else. */
  | { step: 'select-account' }
  /** The consent page, for `request` as offered to the signed-in user (forUser). */
  | { step: 'consent'; request: AuthorizationRequest }
  /** An answer for the client at once: under a remembered grant, or a prompt=none error. */
  | { step: 'respond'; response: AuthorizationResponse };

/** Why the authorization endpoint asks for a sign-in (AuthorizationStep `sign-in`). */
export type SignInReason = 'signed-out' | 'login' | 'max-age' | 'acr';

/**
 * The error of a request whose essential `acr` (Core §5.5.1.1) no sign-in met: OpenID Connect Unmet
 * Authentication Requirements 1.0 §2 defines this code for exactly that case (docs/decisions.md,
 * decision 36; `access_denied` would read as the user's refusal).
 */
export const UNMET_AUTHENTICATION_REQUIREMENTS = 'unmet_authentication_requirements';

/** Loopback hosts (RFC 8252 §7.3, §8.3): any local application can listen there. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * Whether an earlier consent may answer this request without showing the consent page again.
 * Only when the redirect URI itself identifies the client: a confidential client's https redirect to
 * a host other than loopback, and the code flow, whose code is worthless without the client's secret.
 * RFC 8252 §8.6 and RFC 6749 §10.2: a public client, a private-use scheme or a loopback redirect can
 * be claimed by any application on the device, which would otherwise get a code for its own PKCE
 * challenge with no one asked; an implicit response hands the token itself to the redirect, so it
 * always asks.
 */
export function mayReuseConsent(request: AuthorizationRequest): boolean {
  // An ID token (OpenID Connect) is no key to anything: like a code, it serves only the client whose
  // redirect receives it, so `id_token` and `code id_token` remember consent as the code flow does.
  if (responseParts(request.responseType).token || request.client.isPublic) return false;
  // A client that registered itself (RFC 7591) chose its own name and redirect URIs: the user sees
  // who asks each time (docs/decisions.md, decision 10).
  if (request.client.registration !== 'operator') return false;
  let url: URL;
  try {
    url = new URL(request.redirectUri);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && !isLoopbackHost(url.hostname);
}

/**
 * Turns a validated authorization request and the user's decision into the redirect back to the
 * client. A new consent retires the earlier grants of the client that it overrules.
 */
export class AuthorizationService {
  constructor(private readonly options: AuthorizationServiceOptions) {}

  /** RFC 7636 §4.2 `plain` challenges are taken (the metadata's `code_challenge_methods_supported`). */
  get allowsPlainPkce(): boolean {
    return this.options.allowPlainPkce ?? false;
  }

  /** RFC 9126 §5: every client's requests must be pushed first (`require_pushed_authorization_requests`). */
  get requiresPushedRequests(): boolean {
    return this.options.requirePushedRequests ?? false;
  }

  private policy(endpoint: 'authorize' | 'push'): AuthorizationPolicy {
    return {
      issuer: this.options.issuerIdentifier,
      allowPlainPkce: this.allowsPlainPkce,
      ...(this.options.verifyIdTokenHint ? { verifyIdTokenHint: this.options.verifyIdTokenHint } : {}),
      ...(this.options.resources ? { resources: this.options.resources } : {}),
      endpoint,
      requirePushedRequests: this.requiresPushedRequests,
      openPushedRequest: (client, requestUri) => this.openPushedRequest(client, requestUri),
    };
  }

  /**
   * Validates a request's raw query string (validateAuthorizationRequest) under this server's policy.
   * A pushed request's `request_uri` is read from the store (RFC 9126 §4), and its first reading
   * starts the time the user has to sign in and consent (PUSHED_REQUEST_FLOW_SECONDS); an error
   * redirect answers it, so it is consumed.
   */
  async validate(query: string): Promise<AuthorizationValidation> {
    const validation = await validateAuthorizationRequest(
      query,
      this.options.storage.clients,
      this.policy('authorize'),
    );
    if (validation.outcome === 'error-redirect' && validation.pushedRequest !== null) {
      await this.options.storage.pushedRequests.consume(
        validation.pushedRequest,
        new URLSearchParams(query).get('client_id') ?? '',
        this.options.clock.now(),
      );
    }
    return validation;
  }

  /**
   * POST /par (RFC 9126 §2): validates the authorization request `client` (authenticated as at the
   * token endpoint) pushed, exactly as /authorize would, and stores it for its /authorize. Errors are
   * the token endpoint's kind (RFC 9126 §2.3): an OAuthError with status 400. `dpopProofs` are the
   * request's DPoP header values (RFC 9449 §10.1): a proof binds the code to its key, as `dpop_jkt`.
   */
  async push(
    client: Client,
    body: string,
    dpopProofs: readonly string[] = [],
  ): Promise<PushedRequestResponse> {
    const params = new URLSearchParams(body);
    // RFC 9126 §2.1: client_id, when sent, names the authenticated client (checked by client
    // authentication); the request is stored as that client's, without its credentials.
    for (const name of CLIENT_AUTHENTICATION_PARAMS) params.delete(name);
    if (params.getAll('client_id').some((id) => id !== client.id)) {
      throw invalidRequest('client_id does not match the authenticated client');
    }
    params.delete('client_id');
    if (dpopProofs.length > 0) {
      // RFC 9449 §10.1: the proof's key is the request's dpop_jkt; one sent with it must be the same.
      const jkt = await this.pushedProofKey(dpopProofs);
      const named = params.getAll('dpop_jkt');
      if (named.some((value) => value !== jkt)) {
        throw dpopProofError('invalid_dpop_proof', 'dpop_jkt is not the thumbprint of the DPoP proof’s key');
      }
      params.set('dpop_jkt', jkt);
    }
    const query = new URLSearchParams([['client_id', client.id], ...params]).toString();
    const validation = await validateAuthorizationRequest(
      query,
      this.options.storage.clients,
      this.policy('push'),
    );
    if (validation.outcome === 'error-page') throw invalidRequest(validation.description);
    if (validation.outcome === 'error-redirect') {
      const description = validation.response.params.find(([name]) => name === 'error_description')?.[1];
      throw new OAuthError(validation.error, description ?? validation.error);
    }
    const now = this.options.clock.now();
    const ttl = this.options.pushedRequestTtl;
    const { requestUri, hash } = newPushedRequestUri();
    await this.options.storage.pushedRequests.insert({
      hash,
      clientId: client.id,
      params: validation.request.query,
      createdAt: now,
      expiresAt: now + ttl,
      openedAt: null,
      consumedAt: null,
    });
    return { request_uri: requestUri, expires_in: ttl };
  }

  /** The key thumbprint of a DPoP proof sent to POST /par (RFC 9449 §10.1); 400 when it is refused. */
  private async pushedProofKey(proofs: readonly string[]): Promise<string> {
    const { dpop } = this.options;
    if (dpop === undefined) throw dpopProofError('invalid_dpop_proof', 'DPoP is not accepted here');
    const proof = await dpop.verifier.verifyAtAuthorizationServer({
      proofs,
      method: 'POST',
      url: dpop.parEndpointUrl,
    });
    return proof.jkt;
  }

  private async openPushedRequest(
    client: Client,
    requestUri: string,
  ): Promise<OpenedPushedRequest | undefined> {
    const hash = pushedRequestHash(requestUri);
    if (hash === undefined) return undefined;
    const now = this.options.clock.now();
    const stored = await this.options.storage.pushedRequests.open(
      hash,
      client.id,
      now,
      now + PUSHED_REQUEST_FLOW_SECONDS,
    );
    return stored && { params: stored.params, hash };
  }

  /**
   * Consumes the pushed request `request` was read from, before its answer is produced: a second
   * answer (a replayed request_uri, two tabs allowing at once) throws PushedRequestSpentError.
   */
  private async spend(request: AuthorizationRequest): Promise<void> {
    if (request.pushedRequest === null) return;
    const consumed = await this.options.storage.pushedRequests.consume(
      request.pushedRequest,
      request.client.id,
      this.options.clock.now(),
    );
    if (!consumed) throw new PushedRequestSpentError();
  }

  /**
   * What a valid request needs next, for the browser's sign-in (if any). `interacted` says that this
   * browser has just signed in, or chosen its account, for this very request: what prompt=login,
   * max_age and prompt=select_account ask for is then done (else they would ask forever).
   *
   * OpenID Connect (Core §3.1.2.1, §3.1.2.6): prompt=none never shows a page, and answers
   * login_required when nobody is signed in, the sign-in is older than max_age, or id_token_hint
   * names another user; consent_required when no grant covers the request; interaction_required
   * when this client's consent is never remembered (docs/decisions.md, decision 10). prompt=login,
   * and max_age=0 like it, ask for the password again; an older sign-in than max_age too.
   * prompt=consent shows the consent page again. An id_token_hint for another user is only a hint
   * otherwise: the signed-in user stays. An OAuth 2.0 request has none of this but prompt=consent.
   *
   * `grants`, when given, are the signed-in user's grants to the request's client, read with the
   * session (BrowserSessions.signedInFor): the remembered consent is looked for among them, with no
   * read of its own.
   */
  async next(
    asked: AuthorizationRequest,
    session: SignedIn | undefined,
    options: { interacted: boolean; grants?: readonly Grant[] } = { interacted: false },
  ): Promise<AuthorizationStep> {
    if (asked.openid && session !== undefined && !isAuthentication(session)) {
      throw new Error('an OpenID Connect request is answered for a sign-in, not a bare user');
    }
    const respond = (response: AuthorizationResponse): AuthorizationStep => ({ step: 'respond', response });
    // Decision 29: what the signed-in user may be asked for and granted.
    const request = session === undefined ? asked : await this.forUser(asked, session.userId);
    if (request.scope.length === 0 && asked.scope.length > 0) {
      await this.spend(request);
      return respond(this.error(request, adminOnly()));
    }
    const refuse = async (
      code:
        | 'login_required'
        | 'consent_required'
        | 'interaction_required'
        | typeof UNMET_AUTHENTICATION_REQUIREMENTS,
      text: string,
    ): Promise<AuthorizationStep> => {
      await this.spend(request);
      return respond(this.error(request, new OAuthError(code, text)));
    };
    const { prompt } = request;
    const requirement = request.authenticationRequirement;
    const now = this.options.clock.now();
    // Decision 36: what the sign-in lacks for this request (max_age, then acr), if anything.
    const lacking = isAuthentication(session) ? unsatisfied(session, requirement, now) : undefined;
    // Core §5.5.1.1: an essential acr no sign-in here can give fails at once; no one signs in in vain.
    if (unreachable(requirement)) {
      return refuse(UNMET_AUTHENTICATION_REQUIREMENTS, 'no sign-in here meets the acr values asked for');
    }
    if (prompt.none) {
      if (session === undefined) return refuse('login_required', 'the user is not signed in');
      if (lacking === 'max-age') return refuse('login_required', 'the sign-in is older than max_age');
      // An essential acr the sign-in does not meet needs a new, stronger one: a page prompt=none
      // forbids (Core §3.1.2.6). A voluntary one is answered with the acr reached.
      if (lacking === 'acr' && requirement.essential) {
        return refuse('login_required', 'the sign-in does not meet the essential acr asked for');
      }
      if (request.idTokenHint !== undefined && request.idTokenHint.sub !== session.userId) {
        return refuse('login_required', 'another user is signed in than id_token_hint names');
      }
      const grant = await this.rememberedGrant(request, session.userId, options.grants);
      if (grant !== undefined) return respond(await this.approveWithGrant(request, grant, session));
      return mayReuseConsent(request)
        ? refuse('consent_required', 'the user has not allowed this request')
        : refuse('interaction_required', 'this application must ask the user each time');
    }
    const signIn = (reason: SignInReason): AuthorizationStep => {
      const acr = reason === 'acr' ? weakestAcrAsked(requirement) : undefined;
      return { step: 'sign-in', reason, methods: SIGN_IN_METHODS, ...(acr !== undefined ? { acr } : {}) };
    };
    if (session === undefined) return signIn('signed-out');
    if (!options.interacted) {
      if (prompt.login || requirement.maxAge === 0) return signIn('login');
      if (lacking !== undefined) return signIn(lacking);
      if (prompt.selectAccount) return { step: 'select-account' };
    } else if (lacking === 'acr' && requirement.essential) {
      // Signed in again for this very request and still short of an essential acr: Core §5.5.1.1
      // treats it as a failed authentication (decision 36). A voluntary one goes on with what was reached.
      return refuse(
        UNMET_AUTHENTICATION_REQUIREMENTS,
        'the sign-in did not meet the essential acr asked for',
      );
    }
    if (!request.forceConsent) {
      const grant = await this.rememberedGrant(request, session.userId, options.grants);
      if (grant !== undefined) return respond(await this.approveWithGrant(request, grant, session));
    }
    return { step: 'consent', request };
  }

  /**
   * The request as it may be put to `userId` (docs/decisions.md, decision 29): `admin` only for an
   * administrator. The user is read only when the request asks for `admin`.
   */
  async forUser(request: AuthorizationRequest, userId: string): Promise<AuthorizationRequest> {
    if (!request.scope.includes(ADMIN_SCOPE)) return request;
    const user = await this.options.storage.users.get(userId);
    return user?.admin === true ? request : { ...request, scope: scopeForUser(request.scope, user) };
  }

  /**
   * A live grant of this user to this client that already covers everything the request asks for,
   * when the request may be answered under it without asking again (see mayReuseConsent). Looked for
   * among `known` (the user's grants to the client, newest first) when given, else in the store.
   */
  async rememberedGrant(
    request: AuthorizationRequest,
    userId: string,
    known?: readonly Grant[],
  ): Promise<Grant | undefined> {
    if (!mayReuseConsent(request)) return undefined;
    const now = this.options.clock.now();
    const grants = known ?? (await this.options.storage.grants.listByUser(userId));
    return grants.find(
      (grant) =>
        grant.userId === userId &&
        grant.clientId === request.client.id &&
        isGrantLive(grant, now) &&
        isSubset(request.scope, grant.scope),
    );
  }

  /** Answers the request under a grant the user made earlier (consent skipped). */
  async approveWithGrant(
    asked: AuthorizationRequest,
    grant: Grant,
    session?: SignedIn,
  ): Promise<AuthorizationResponse> {
    const request = await this.forUser(asked, grant.userId);
    await this.spend(request);
    if (request.scope.length === 0 && asked.scope.length > 0) return this.error(request, adminOnly());
    return this.respond(request, grant, request.scope, isAuthentication(session) ? session : undefined);
  }

  /**
   * Records the user's consent as a grant, retires the earlier grants it overrules, and answers the
   * request. `user` is the sign-in (an OpenID Connect response needs its time and session) or, where
   * no ID token comes of it, only the user's id.
   */
  async approve(
    request: AuthorizationRequest,
    user: string | SignedIn,
    decision: ConsentDecision,
    /** The consent page's request address, recorded with the consent (decision 41). */
    address: string | null = null,
  ): Promise<AuthorizationResponse> {
    const session = typeof user === 'string' ? { userId: user } : user;
    const authentication = isAuthentication(session) ? session : undefined;
    // The consent page may only narrow what was asked for (RFC 6749 §3.3: the user chooses what they grant).
    if (!isSubset(decision.scope, request.scope)) throw new Error('consent widened the requested scope');
    if (!GRANT_LIFETIMES.includes(decision.lifetime)) throw new Error('unknown grant lifetime');
    // Before the grant: a pushed request answered already leaves nothing behind.
    await this.spend(request);
    // Decision 36: an essential acr is met by the sign-in the consent is given under, not only by the
    // one next() saw (another tab may have signed in anew meanwhile, more weakly): Core §5.5.1.1.
    const requirement = { ...request.authenticationRequirement, maxAge: null };
    if (
      authentication !== undefined &&
      requirement.essential &&
      unsatisfied(authentication, requirement, this.options.clock.now()) === 'acr'
    ) {
      return this.error(
        request,
        new OAuthError(
          UNMET_AUTHENTICATION_REQUIREMENTS,
          'the sign-in did not meet the essential acr asked for',
        ),
      );
    }
    // recordConsent leaves out what the user may not have (decision 29).
    const input = { client: request.client, userId: session.userId, requested: request.scope, decision };
    const now = this.options.clock.now();
    const { audit } = this.options;
    const { grant, scope } =
      audit === undefined
        ? await recordConsent(this.options.storage, input, now)
        : await audit.change(
            { actor: { type: 'user', id: session.userId }, address },
            async (storage, record) => {
              const recorded = await recordConsent(storage, input, now);
              if (recorded.created) {
                await record({
                  type: 'consent.given',
                  userId: session.userId,
                  clientId: request.client.id,
                  after: { grant_id: recorded.grant.id, scopes: recorded.scope, lifetime: decision.lifetime },
                });
              }
              return recorded;
            },
          );
    if (scope.length === 0 && decision.scope.length > 0) return this.error(request, adminOnly());
    return this.respond(request, grant, scope, authentication);
  }

  /** RFC 6749 §4.1.2.1: the user said no. */
  async deny(request: AuthorizationRequest): Promise<AuthorizationResponse> {
    await this.spend(request);
    return this.error(request, new OAuthError('access_denied', 'the user denied the request'));
  }

  error(request: AuthorizationRequest, error: OAuthError): AuthorizationResponse {
    return authorizationErrorResponse(
      request.redirectUri,
      request.responseMode,
      error,
      request.state,
      this.options.issuerIdentifier,
    );
  }

  /**
   * The success response of the request's type (RFC 6749 §4.1.2, §4.2.2; Core §3.2.2.5, §3.3.2.5):
   * a code, an access token, an ID token, or their combination, with state, in the request's mode.
   */
  private async respond(
    request: AuthorizationRequest,
    grant: Grant,
    scope: string[],
    authentication: Authentication | undefined,
  ): Promise<AuthorizationResponse> {
    const parts = responseParts(request.responseType);
    const params: Record<string, string | undefined> = {};
    // Decision 36: the acr every token of this response reports, of the values asked for when the
    // sign-in reached one (Core §5.5.1.1), never more than what happened.
    const signIn = authentication && {
      ...authentication,
      acr: reportedAcr(authentication.acr, request.authenticationRequirement),
    };
    let code: string | undefined;
    let accessToken: string | undefined;
    if (parts.code) {
      code = await this.issueCode(request, grant, scope, signIn);
      params.code = code;
    }
    if (parts.token) {
      const token = await this.options.issuer.issueAccessToken({
        client: request.client,
        subject: grant.userId,
        scope,
        // RFC 8707 §2: a token from the authorization endpoint is for the resources asked for.
        resources: request.resources,
        grant,
        withRefreshToken: false,
        // RFC 9470 §4: when and how the user signed in (decision 36).
        ...(signIn === undefined ? {} : { authentication: signInOfToken(signIn) }),
      });
      accessToken = token.access_token;
      Object.assign(params, implicitParams(token));
    }
    if (parts.idToken) {
      const idTokens = this.options.idTokens;
      if (idTokens === undefined || signIn === undefined) {
        throw new Error('an ID token needs the ID token issuer and the sign-in it asserts');
      }
      // Core §3.2.2.10, §3.3.2.11: nonce always; at_hash beside an access token, c_hash beside a code.
      params.id_token = await idTokens.issue({
        client: request.client,
        userId: grant.userId,
        scope,
        ...(request.nonce !== null ? { nonce: request.nonce } : {}),
        authTime: signIn.authTime,
        sid: signIn.sid,
        // Core §2, RFC 8176 (decision 36): what the sign-in was worth.
        ...(signIn.acr !== undefined ? { acr: signIn.acr } : {}),
        ...(signIn.amr !== undefined ? { amr: signIn.amr } : {}),
        ...(accessToken !== undefined ? { accessToken } : {}),
        ...(code !== undefined ? { code } : {}),
      });
    }
    params.state = request.state;
    return authorizationResponse(
      request.redirectUri,
      request.responseMode,
      params,
      this.options.issuerIdentifier,
    );
  }

  /**
   * A single-use code bound to client, redirect URI, PKCE challenge, user, scope, grant and the
   * resources asked for (RFC 8707 §2.2: the token request may narrow them); for an
   * OpenID Connect request also the nonce and the sign-in, for the ID token the code is exchanged for
   * (Core §3.1.3.6: same nonce; §2: auth_time; sid).
   */
  private async issueCode(
    request: AuthorizationRequest,
    grant: Grant,
    scope: string[],
    authentication: Authentication | undefined,
  ): Promise<string> {
    const now = this.options.clock.now();
    const code = randomToken('ac_');
    await this.options.storage.codes.insert({
      hash: sha256(code),
      clientId: request.client.id,
      userId: grant.userId,
      grantId: grant.id,
      redirectUri: request.redirectUri,
      scope,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: request.codeChallengeMethod,
      nonce: request.openid ? request.nonce : null,
      // Any request's sign-in, for its access tokens (RFC 9470 §4, decision 36); the session only
      // for an OpenID Connect request's ID token.
      authTime: authentication?.authTime ?? null,
      sid: request.openid ? (authentication?.sid ?? null) : null,
      ...(authentication?.acr === undefined ? {} : { acr: authentication.acr }),
      ...(authentication?.amr === undefined ? {} : { amr: [...authentication.amr] }),
      resources: request.resources,
      dpopJkt: request.dpopJkt,
      createdAt: now,
      expiresAt: now + this.options.authorizationCodeTtl,
      consumedAt: null,
    });
    return code;
  }
}

/** A sign-in as the token issuer keeps it (RefreshAuthentication). */
function signInOfToken(authentication: Authentication): RefreshAuthentication {
  return {
    authTime: authentication.authTime,
    sid: authentication.sid,
    acr: authentication.acr ?? null,
    amr: authentication.amr === undefined ? null : [...authentication.amr],
  };
}

/**
 * The fragment of an implicit response (RFC 6749 §4.2.2): everything of the token response but a
 * refresh token, which the implicit grant never issues.
 */
function implicitParams(token: TokenResponse): Record<string, string | undefined> {
  return {
    access_token: token.access_token,
    token_type: token.token_type,
    expires_in: String(token.expires_in),
    scope: token.scope,
    mac_key: token.mac_key,
    mac_algorithm: token.mac_algorithm,
  };
}
