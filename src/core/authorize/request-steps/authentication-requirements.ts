import type { AuthenticationRequirement } from '../../sign-in/assurance.js';
import { single, type RequestDraft, type StepError } from './draft.js';

/** More values than any relying party needs: the list is bounded like every other parameter. */
const MAX_ACR_VALUES = 16;
const MAX_ACR_VALUE_LENGTH = 256;

const invalid = (description: string): StepError => ({ error: 'invalid_request', description });

/**
 * What the request asks of the sign-in that answers it (docs/decisions.md, decision 36):
 * `acr_values` (Core §3.1.2.1; RFC 9470 §4 gives it and `max_age` to OAuth 2.0 requests too), voluntary;
 * the `claims` parameter's `id_token.acr` (Core §5.5.1.1), essential or not, of an OpenID Connect
 * request; and `max_age`, read for an OpenID Connect request by the `openid-parameters` step and here
 * for an OAuth 2.0 one (RFC 9470 §4), where a malformed value is ignored as it always was.
 * An essential `acr` in `claims` takes the place of `acr_values`: it is the stricter of the two.
 */
export function readAuthenticationRequirements(draft: RequestDraft): StepError | undefined {
  const acrValues = (single(draft.params, 'acr_values').value ?? '').split(' ').filter((v) => v !== '');
  if (acrValues.length > MAX_ACR_VALUES || acrValues.some((v) => v.length > MAX_ACR_VALUE_LENGTH)) {
    return invalid(`acr_values takes at most ${MAX_ACR_VALUES} values of ${MAX_ACR_VALUE_LENGTH} characters`);
  }
  let requirement: Omit<AuthenticationRequirement, 'maxAge'> = { acrValues, essential: false };
  if (draft.openid) {
    const claims = readClaimsAcr(single(draft.params, 'claims').value);
    if ('error' in claims) return claims;
    if (claims.acr !== undefined && (claims.acr.essential || acrValues.length === 0))
      requirement = claims.acr;
  }
  let maxAge = draft.openIdParams?.maxAge ?? null;
  if (!draft.openid) {
    const sent = single(draft.params, 'max_age').value;
    if (sent !== undefined && /^\d{1,10}$/.test(sent)) maxAge = Number(sent);
    if (draft.openIdParams !== undefined) draft.openIdParams = { ...draft.openIdParams, maxAge };
  }
  draft.authenticationRequirement = { ...requirement, maxAge };
  return undefined;
}

/**
 * The `acr` member of the `claims` parameter's `id_token` object (Core §5.5, §5.5.1.1): `essential`,
 * and `value` or `values`. The parameter must be a JSON object when sent; every other claim asked for
 * in it is ignored (Core §5.5: claims this server does not return individually are left out, and
 * discovery does not announce `claims_parameter_supported`; decision 36).
 */
function readClaimsAcr(
  sent: string | undefined,
): { acr?: Omit<AuthenticationRequirement, 'maxAge'> } | StepError {
  if (sent === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent);
  } catch {
    return invalid('claims is not a JSON object');
  }
  if (!isObject(parsed)) return invalid('claims is not a JSON object');
  const idToken = parsed.id_token;
  if (idToken === undefined || idToken === null) return {};
  if (!isObject(idToken)) return invalid('claims.id_token is not a JSON object');
  const acr = idToken.acr;
  // Core §5.5: null asks for the claim in the default manner: nothing to meet.
  if (acr === undefined || acr === null) return {};
  if (!isObject(acr)) return invalid('claims.id_token.acr is not a JSON object or null');
  const { essential, value, values } = acr;
  if (essential !== undefined && typeof essential !== 'boolean') {
    return invalid('claims.id_token.acr.essential is not a boolean');
  }
  let asked: string[] = [];
  if (value !== undefined) {
    if (typeof value !== 'string') return invalid('claims.id_token.acr.value is not a string');
    asked = [value];
  }
  if (values !== undefined) {
    if (!Array.isArray(values) || !values.every((v): v is string => typeof v === 'string')) {
      return invalid('claims.id_token.acr.values is not an array of strings');
    }
    asked = [...asked, ...values];
  }
  if (asked.length > MAX_ACR_VALUES || asked.some((v) => v.length > MAX_ACR_VALUE_LENGTH)) {
    return invalid(
      `claims.id_token.acr takes at most ${MAX_ACR_VALUES} values of ${MAX_ACR_VALUE_LENGTH} characters`,
    );
  }
  // An essential acr without values asks only that one be returned, which every ID token does.
  return { acr: { acrValues: asked, essential: essential === true && asked.length > 0 } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
