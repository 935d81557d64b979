import { checkCodeChallenge } from '../pkce.js';
import { responseParts } from '../response.js';
import { responseTypeOf, single, type RequestDraft, type StepError } from './draft.js';

/**
 * PKCE (RFC 7636 §4.3, §4.4.1), for every response type with a code; public clients must use S256
 * (RFC 9700 §2.1.1). The rules are checkCodeChallenge's (core/authorize/pkce.ts), beside the verifier's.
 */
export function checkPkce(draft: RequestDraft): StepError | undefined {
  if (!responseParts(responseTypeOf(draft)).code) return undefined;
  const check = checkCodeChallenge(
    {
      challenge: single(draft.params, 'code_challenge').value,
      method: single(draft.params, 'code_challenge_method').value,
    },
    { isPublic: draft.client.isPublic, allowPlain: draft.policy.allowPlainPkce },
  );
  if (!check.ok) return { error: 'invalid_request', description: check.description };
  if (check.challenge !== null) {
    draft.pkce = { codeChallenge: check.challenge.challenge, codeChallengeMethod: check.challenge.method };
  }
  return undefined;
}
