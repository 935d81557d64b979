import { single, type RequestDraft, type StepError } from './draft.js';

/** RFC 8707 §2: the one authorization request parameter that may be sent more than once. */
const REPEATABLE = new Set(['resource']);

const MAX_STATE_LENGTH = 2048;

/** RFC 9126 §5, §6: a client, or a server, that requires pushed requests takes no other at /authorize. */
export function requirePushedRequest(draft: RequestDraft): StepError | undefined {
  const mustPush =
    draft.client.requirePushedAuthorizationRequests || draft.policy.requirePushedRequests === true;
  if (draft.pushing || draft.pushedRequest !== null || !mustPush) return undefined;
  return {
    error: 'invalid_request',
    description:
      'authorization requests must be pushed to the pushed authorization request endpoint first (RFC 9126)',
  };
}

/** RFC 6749 §3.1: no parameter more than once, but `resource` (RFC 8707 §2). */
export function refuseRepeatedParameters(draft: RequestDraft): StepError | undefined {
  for (const name of new Set(draft.params.keys())) {
    if (!REPEATABLE.has(name) && single(draft.params, name).repeated) {
      return { error: 'invalid_request', description: `parameter repeated: ${name.slice(0, 64)}` };
    }
  }
  return undefined;
}

/** `state` (RFC 6749 §4.1.1) is echoed in every response: bounded, so no request makes one huge. */
export function checkState(draft: RequestDraft): StepError | undefined {
  if (draft.state === undefined || draft.state.length <= MAX_STATE_LENGTH) return undefined;
  return { error: 'invalid_request', description: `state is longer than ${MAX_STATE_LENGTH} characters` };
}
