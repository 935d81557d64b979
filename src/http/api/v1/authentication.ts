import type { FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import {
  AccessTokenValidator,
  InvalidAccessTokenError,
  type ValidAccessToken,
} from '../../../core/tokens/access-token-validation.js';
import { extractCredential, missingScopes, TokenError } from 'gatehouse-oauth-resource-server/rfc6750';
import type { DpopVerifier } from '../../../core/tokens/dpop.js';
import { ADMIN_SCOPE } from '../../../core/scopes/admin-scope.js';
import { checkTokenPresentation } from '../../../core/tokens/token-presentation.js';
import { dpopTokenError, presentationOf } from '../../dpop-request.js';
import { mediaType } from '../../form-params.js';
import { Problem } from './problem.js';

export interface ApiAuthOptions {
  validator: AccessTokenValidator;
  allowQuery: boolean;
  /** Checks a MAC-signed request and returns its token's validation; see mac-authentication.ts. */
  verifyMac?: (request: FastifyRequest, header: string) => Promise<ValidAccessToken>;
  /** Checks the proof of a DPoP-bound token (RFC 9449 §7), and hands out nonces (§9). */
  dpop: DpopVerifier;
  /** The issuer URL and base path, which the URL a DPoP proof names is built from. */
  issuer: string;
  basePath: string;
  /** Whether the user is an administrator now (docs/decisions.md, decision 29). */
  isAdministrator: (userId: string) => Promise<boolean>;
}

export interface RouteAuth {
  /** Every one of these scopes is needed (RFC 6750 §3.1 insufficient_scope otherwise). */
  scopes: string[];
  /** The token must act for a user (not a client_credentials token). */
  user?: boolean;
}

const callers = new WeakMap<FastifyRequest, ValidAccessToken>();
const requirements = new WeakMap<object, RouteAuth>();

/** What a route's preValidation hook(s) demand, for the OpenAPI document's `security`. */
export function authRequirementOf(hooks: unknown): RouteAuth | undefined {
  for (const hook of [hooks].flat()) {
    if (typeof hook === 'function' && requirements.has(hook)) return requirements.get(hook);
  }
  return undefined;
}

/** The validated token of an authenticated /v1 request. */
export function callerOf(request: FastifyRequest): ValidAccessToken {
  const caller = callers.get(request);
  if (caller === undefined) throw new Error('route registered without authentication');
  return caller;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The preValidation hook of a protected /v1 route: runs after the body is parsed (a form body may
 * carry the token, RFC 6750 §2.2) and before schema validation, so a caller without a valid token
 * learns nothing about the request's shape.
 */
export function authenticator(options: ApiAuthOptions) {
  return function requireToken(auth: RouteAuth): preValidationAsyncHookHandler {
    const hook = async function authenticate(request: FastifyRequest, reply: FastifyReply) {
      const isForm = mediaType(request.headers['content-type']) === FORM;
      const formBody = isForm ? (request.body as Record<string, unknown> | undefined) : undefined;
      const query = request.query as Record<string, unknown> | undefined;
      const credential = extractCredential({
        authorization: request.headers.authorization,
        formBody,
        method: request.method,
        query,
        allowQuery: options.allowQuery,
      });
      if (credential === undefined) throw new TokenError(undefined, 'an access token is required');

      let valid: ValidAccessToken;
      if (credential.scheme === 'mac') {
        if (options.verifyMac === undefined) {
          throw new TokenError('invalid_token', 'MAC tokens are not accepted here', { scheme: 'mac' });
        }
        valid = await options.verifyMac(request, credential.macHeader ?? '');
      } else {
        const scheme = credential.scheme;
        try {
          valid = await options.validator.validate(credential.token);
          // A MAC token is useless without its signature, a DPoP-bound one without its proof: each is
          // refused as a bearer token (RFC 9449 §7.2); under DPoP the proof is checked here.
          await checkTokenPresentation(
            credential.token,
            valid,
            presentationOf(request, scheme, options.issuer, options.basePath),
            options.dpop,
          );
        } catch (error) {
          if (error instanceof InvalidAccessTokenError)
            throw new TokenError('invalid_token', error.description, { scheme });
          throw dpopTokenError(error, options.dpop) ?? error;
        }
        // RFC 9449 §9: with nonces required, the one to use next.
        const nonce = scheme === 'dpop' ? options.dpop.nonce() : undefined;
        if (nonce !== undefined) reply.header('dpop-nonce', nonce);
      }

      const scheme = credential.scheme;
      const missing = missingScopes(valid.claims.scope, auth.scopes);
      if (missing.length > 0) {
        throw new TokenError('insufficient_scope', `the access token lacks the scope ${missing.join(' ')}`, {
          scheme,
          scope: auth.scopes.join(' '),
        });
      }
      if (auth.user === true && valid.claims.gid === undefined) {
        throw new TokenError('insufficient_scope', 'this resource needs a token issued for a user', {
          scheme,
          scope: auth.scopes.join(' '),
        });
      }
      // Decision 29: a token issued for a user is worth no more than the user. A route that needs
      // `admin` takes it from a client acting for itself (client_credentials: no grant, `sub` the
      // client), and from a user's token only while that user is an administrator: a token issued
      // before the role was taken away, or by a path that let `admin` through, opens nothing.
      const forUser = valid.claims.gid !== undefined || valid.claims.sub !== valid.claims.client_id;
      if (
        forUser &&
        auth.scopes.includes(ADMIN_SCOPE) &&
        !(await options.isAdministrator(valid.claims.sub))
      ) {
        throw new TokenError('insufficient_scope', `the ${ADMIN_SCOPE} scope is for administrators`, {
          scheme,
          scope: auth.scopes.join(' '),
        });
      }
      callers.set(request, valid);

      // The token is spent: take it out of what schema validation and the handler see.
      if (credential.source === 'query' && query !== undefined) delete query.access_token;
      if (isForm) {
        if (request.routeOptions.schema?.body !== undefined) {
          throw new Problem(415, 'send the body as application/json', { field: 'content-type' });
        }
        request.body = undefined;
      }
    };
    requirements.set(hook, auth);
    return hook;
  };
}
