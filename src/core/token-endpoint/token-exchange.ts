import {
  InvalidAccessTokenError,
  MAX_ACTOR_DEPTH,
  type ValidAccessToken,
} from '../tokens/access-token-validation.js';
import { ADMIN_SCOPE, adminOnly, currentScopeOf } from '../scopes/admin-scope.js';
import { invalidRequest, invalidScope, invalidTarget } from '../errors.js';
import { TOKEN_EXCHANGE_GRANT } from '../model.js';
import { audiencesOf, resolveScopeForResources, urisOf } from '../scopes/resources.js';
import { parseScope } from '../scopes/scopes.js';
import type { AccessTokenClaims, ActorClaim } from '../tokens/token-issuer.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';

/** RFC 8693 §3: the one token type Gatehouse accepts and issues in an exchange. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * RFC 8693 §2.2.2: a subject or actor token that is invalid or unacceptable for any reason is
 * `invalid_request` (a MUST), whatever the reason; the description says which token and why, never
 * echoing it.
 */
async function validToken(
  context: GrantContext,
  name: 'subject_token' | 'actor_token',
  token: string | undefined,
  type: string | undefined,
): Promise<ValidAccessToken> {
  if (token === undefined || token === '') throw invalidRequest(`${name} is required`);
  if (type === undefined || type === '') throw invalidRequest(`${name}_type is required`);
  if (type !== ACCESS_TOKEN_TYPE) {
    throw invalidRequest(`${name}_type not supported: only ${ACCESS_TOKEN_TYPE} (RFC 8693 §3)`);
  }
  try {
    // Any audience: the token being exchanged is typically one issued for the calling service.
    return await context.accessTokens.validate(token, 'any');
  } catch (error) {
    if (error instanceof InvalidAccessTokenError) throw invalidRequest(`${name}: ${error.description}`);
    throw error;
  }
}

function depthOf(actor: ActorClaim | undefined): number {
  return actor === undefined ? 0 : 1 + depthOf(actor.act);
}

/**
 * RFC 8693 §4.4: a subject token's `may_act` names who may act for its subject; the actor (the actor
 * token's subject and client, or the exchanging client itself) must match every claim it names. A
 * claim Gatehouse cannot tell of the actor (anything but `sub` and `client_id`) matches nobody.
 */
export function mayActAs(mayAct: AccessTokenClaims['may_act'], actor: ActorClaim): boolean {
  if (mayAct === undefined) return true;
  const known: Record<string, string | undefined> = { sub: actor.sub, client_id: actor.client_id };
  return Object.entries(mayAct).every(([name, value]) => Object.hasOwn(known, name) && known[name] === value);
}

/**
 * RFC 8693 §2: a client registered for it exchanges a Gatehouse access token (`subject_token`) for
 * one that is never wider (docs/decisions.md, decision 22): its scope a subset of the subject
 * token's and of the client's, for registered resources (`resource`, or `audience` naming one by its
 * URI) that offer that scope, or the subject token's own audience by default; under the subject
 * token's grant (`gid`), so it dies with it, and expiring no later than the subject token. No refresh
 * token (§2.2.1 leaves it optional). Its `act` (§4.1) names the actor token's subject, or the client
 * when there is no actor token, with the subject token's own `act` nested inside.
 */
export const tokenExchangeGrant = {
  grantType: TOKEN_EXCHANGE_GRANT,
  allowsPublicClients: false,
  async handle({ client, params, resources: resourceValues, audiences = [], dpop }, context) {
    const requestedType = params.requested_token_type;
    if (requestedType !== undefined && requestedType !== ACCESS_TOKEN_TYPE) {
      throw invalidRequest(`requested_token_type not supported: only ${ACCESS_TOKEN_TYPE} is issued`);
    }
    // RFC 8693 §2.1: actor_token_type is required with actor_token, and must not come without it.
    const hasActor = params.actor_token !== undefined && params.actor_token !== '';
    if (!hasActor && params.actor_token_type !== undefined) {
      throw invalidRequest('actor_token_type was sent without actor_token');
    }
    const asked = parseScope(params.scope);
    const subject = await validToken(
      context,
      'subject_token',
      params.subject_token,
      params.subject_token_type,
    );
    const actor = hasActor
      ? await validToken(context, 'actor_token', params.actor_token, params.actor_token_type)
      : undefined;
    if (subject.tokenType === 'mac') {
      throw invalidRequest('subject_token: a MAC token cannot be exchanged (its key would not follow it)');
    }
    // RFC 9449 §7.2: a DPoP-bound token is worth nothing without its key, and an exchange must not
    // launder it into one that is: only the key's holder, proving it with this request's proof, may
    // exchange it (docs/decisions.md, decision 25).
    for (const [name, token] of [
      ['subject_token', subject],
      ['actor_token', actor],
    ] as const) {
      if (token?.tokenType === 'dpop' && token.claims.cnf?.jkt !== dpop?.jkt) {
        throw invalidRequest(
          `${name}: a DPoP-bound token is exchanged only with a DPoP proof made with its key`,
        );
      }
    }
    if (subject.grant === undefined) {
      // Without a grant the new token could not be tied to the subject's lifetime (decision 22).
      throw invalidRequest('subject_token: only a token issued under a user’s grant can be exchanged');
    }
    const claims = subject.claims;
    const current: ActorClaim =
      actor === undefined ? { sub: client.id } : { sub: actor.claims.sub, client_id: actor.claims.client_id };
    // RFC 8693 §4.4, §2.2.2: a subject token that says who may act for its subject is unacceptable
    // for any other actor. The exchanging client acting alone is both `sub` and `client_id`.
    const acting = actor === undefined ? { sub: client.id, client_id: client.id } : current;
    if (!mayActAs(claims.may_act, acting)) {
      throw invalidRequest('subject_token: its may_act does not name this actor (RFC 8693 §4.4)');
    }
    if (claims.act !== undefined) current.act = claims.act;
    if (depthOf(current) > MAX_ACTOR_DEPTH) {
      throw invalidRequest(`the delegation chain would be longer than ${MAX_ACTOR_DEPTH} actors`);
    }

    // Scope narrows only (RFC 8693 §2.1, §5): what the subject token had, and what the client may have.
    const subjectScope = parseScope(claims.scope) ?? [];
    const outsideSubject = (asked ?? []).filter((name) => !subjectScope.includes(name));
    if (outsideSubject.length > 0) {
      throw invalidScope(`scope not in the subject token: ${outsideSubject.join(' ')}`);
    }
    // Decision 29: `admin` passes on only while the subject token's user is an administrator.
    const mayHave = subjectScope.filter((name) => client.scopes.includes(name));
    const allowed = await currentScopeOf(context.storage, claims.sub, mayHave);
    if (allowed.length < mayHave.length && (allowed.length === 0 || asked?.includes(ADMIN_SCOPE))) {
      throw adminOnly();
    }

    // `audience` names logical targets (RFC 8693 §2.1); Gatehouse's targets are its registered
    // resources, so an audience is one of their URIs, held to the rules of `resource` (RFC 8707).
    const named = [...resourceValues, ...audiences];
    const own = context.resources.canonical(audiencesOf(claims.aud));
    const targets =
      named.length > 0 ? await context.resources.resolve(named) : await context.resources.lookUp(own);
    // Decision 23: a client may point the new token elsewhere than the subject token's own audience
    // only at the targets it is registered for (RFC 8693 §2.2.2: invalid_target when unwilling).
    const permitted = context.resources.canonical(client.tokenExchangeTargets);
    const refused = urisOf(targets).filter((uri) => !own.includes(uri) && !permitted.includes(uri));
    if (refused.length > 0) {
      throw invalidTarget(
        `this client may not exchange tokens for ${refused.join(' ')}: not among its token exchange targets`,
      );
    }
    const scope = resolveScopeForResources(asked, allowed, targets);
    // A client registered for MAC tokens still gets a bearer token here: RFC 8693 §2.2.1's
    // token_type is the exchanged token's, and no MAC key is derived for it.
    const response = await context.issuer.issueAccessToken({
      client: { ...client, tokenType: 'bearer' },
      subject: claims.sub,
      scope,
      resources: urisOf(targets),
      grant: subject.grant,
      withRefreshToken: false,
      act: current,
      notAfter: claims.exp,
      // Decision 36: the user's sign-in behind the subject token, unchanged (RFC 9470 §4), so that the
      // next service can demand a step-up of it as the first could; none when it names none.
      ...(claims.auth_time === undefined && claims.acr === undefined
        ? {}
        : {
            authentication: {
              authTime: claims.auth_time ?? null,
              sid: null,
              acr: claims.acr ?? null,
              amr: null,
            },
          }),
      // RFC 9449 §5: the new token is bound to the key of this request's proof, if it sent one.
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    });
    return { ...response, issued_token_type: ACCESS_TOKEN_TYPE };
  },
} satisfies GrantHandler;
