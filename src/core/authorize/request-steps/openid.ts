import type { IdTokenHint } from '../../tokens/id-token-hint.js';
import type { AuthorizationPolicy, Prompt } from '../request.js';
import { responseParts, type ResponseParts } from '../response.js';
import {
  promptValues,
  responseTypeOf,
  single,
  type OpenIdParams,
  type RequestDraft,
  type StepError,
} from './draft.js';

const PROMPT_VALUES = new Map<string, keyof Prompt>([
  ['none', 'none'],
  ['login', 'login'],
  ['consent', 'consent'],
  ['select_account', 'selectAccount'],
]);

/** The nonce travels into every ID token of the request: bounded like state. */
const MAX_NONCE_LENGTH = 2048;
/** A hint longer than any user name helps no one; it is cut, not refused (Core §3.1.2.1: a hint). */
const MAX_LOGIN_HINT_LENGTH = 256;

/**
 * The prompt and, for an OpenID Connect request, its other parameters (Core §3.1.2.1). An OAuth 2.0
 * request reads only prompt=consent, as Gatehouse always read it.
 */
export async function readOpenIdParameters(draft: RequestDraft): Promise<StepError | undefined> {
  if (!draft.openid) {
    const consent = (single(draft.params, 'prompt').value ?? '').split(' ').includes('consent');
    draft.openIdParams = {
      nonce: null,
      prompt: { none: false, login: false, consent, selectAccount: false },
      maxAge: null,
      loginHint: undefined,
      idTokenHint: undefined,
    };
    return undefined;
  }
  const read = await readOpenIdParams(
    draft.params,
    promptValues(draft),
    responseParts(responseTypeOf(draft)),
    draft.policy,
  );
  if ('error' in read) return read;
  draft.openIdParams = read;
  return undefined;
}

/**
 * Core §3.1.2.1: display, ui_locales, claims_locales and acr_values are optional to honour and are not
 * read; unknown parameters are ignored. An error is invalid_request.
 */
async function readOpenIdParams(
  params: URLSearchParams,
  promptValues: readonly string[],
  parts: ResponseParts,
  policy: Pick<AuthorizationPolicy, 'verifyIdTokenHint'>,
): Promise<OpenIdParams | StepError> {
  const invalid = (description: string): StepError => ({ error: 'invalid_request', description });
  // nonce: required whenever an ID token comes from this endpoint (Core §3.2.2.1, §3.3.2.11).
  const nonce = single(params, 'nonce').value ?? null;
  if (nonce === null && parts.idToken) {
    return invalid('nonce is required when the response includes an ID token');
  }
  if (nonce !== null && nonce.length > MAX_NONCE_LENGTH) {
    return invalid(`nonce is longer than ${MAX_NONCE_LENGTH} characters`);
  }
  // prompt: known values only, and none alone.
  const prompt: Prompt = { none: false, login: false, consent: false, selectAccount: false };
  for (const value of promptValues) {
    const key = PROMPT_VALUES.get(value);
    if (key === undefined) return invalid(`unknown prompt value: ${value.slice(0, 64)}`);
    prompt[key] = true;
  }
  if (prompt.none && promptValues.length > 1) {
    return invalid('prompt=none cannot be combined with other prompt values');
  }
  // max_age: a non-negative number of seconds.
  const maxAgeParam = single(params, 'max_age').value;
  let maxAge: number | null = null;
  if (maxAgeParam !== undefined) {
    if (!/^\d{1,10}$/.test(maxAgeParam)) return invalid('max_age must be a whole number of seconds');
    maxAge = Number(maxAgeParam);
  }
  // id_token_hint: an ID token this server issued (an expired one still hints).
  const hintParam = single(params, 'id_token_hint').value;
  let idTokenHint: IdTokenHint | undefined;
  if (hintParam !== undefined) {
    idTokenHint = await policy.verifyIdTokenHint?.(hintParam);
    if (idTokenHint === undefined) {
      return invalid('id_token_hint is not an ID token issued by this server');
    }
  }
  const loginHint = single(params, 'login_hint').value?.slice(0, MAX_LOGIN_HINT_LENGTH);
  return { nonce, prompt, maxAge, loginHint, idTokenHint };
}
