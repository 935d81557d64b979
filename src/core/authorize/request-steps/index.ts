import { readAuthenticationRequirements } from './authentication-requirements.js';
import type { RequestStep, TrustStep } from './draft.js';
import { refuseRequestObject, refuseRequestUri } from './request-objects.js';
import { checkDpop } from './dpop.js';
import { readOpenIdParameters } from './openid.js';
import { checkState, refuseRepeatedParameters, requirePushedRequest } from './parameters.js';
import { checkPkce } from './pkce.js';
import { checkResponseMode, checkResponseType } from './response-type.js';
import { resolveScopeAndResources } from './scope.js';
import { checkClient, checkRedirectUri, openPushedRequest } from './trust.js';

export type { RequestDraft, RequestStep, TrustDraft, TrustStep, TrustedRequest } from './draft.js';

/**
 * RFC 6749 §4.1.2.1, first: what decides whether the redirect URI can be trusted. Their errors are
 * shown on an error page, never redirected, whatever else is wrong with the request.
 */
export const TRUST_STEPS: readonly TrustStep[] = [
  { name: 'client', run: checkClient },
  { name: 'pushed-request', run: openPushedRequest },
  { name: 'redirect-uri', run: checkRedirectUri },
];

/**
 * Then everything else, in this order: the first error found is the one answered, sent to the
 * verified redirect URI in the request's response mode (or shown on a page for a self-registered
 * client: refuse in draft.ts). A new parameter is one new step here.
 */
export const REQUEST_STEPS: readonly RequestStep[] = [
  { name: 'pushed-required', run: requirePushedRequest },
  { name: 'repeated-parameters', run: refuseRepeatedParameters },
  { name: 'state', run: checkState },
  { name: 'response-type', run: checkResponseType },
  { name: 'response-mode', run: checkResponseMode },
  { name: 'request-object', run: refuseRequestObject },
  { name: 'request-uri', run: refuseRequestUri },
  { name: 'scope-and-resources', run: resolveScopeAndResources },
  { name: 'pkce', run: checkPkce },
  { name: 'dpop', run: checkDpop },
  { name: 'openid-parameters', run: readOpenIdParameters },
  { name: 'authentication-requirements', run: readAuthenticationRequirements },
];

/** Every step of an authorization request's validation, in the order run. */
export const AUTHORIZATION_STEPS: readonly (TrustStep | RequestStep)[] = [...TRUST_STEPS, ...REQUEST_STEPS];
