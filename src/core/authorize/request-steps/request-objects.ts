import { single, type RequestDraft, type StepError } from './draft.js';

/**
 * Request objects (Core §6): not supported, and said so, so no client believes its signed request was
 * obeyed.
 */
export function refuseRequestObject(draft: RequestDraft): StepError | undefined {
  if (!draft.openid || !draft.params.has('request')) return undefined;
  return {
    error: 'request_not_supported',
    description: 'request objects are not supported; send the parameters themselves',
  };
}

/**
 * RFC 9126 §2.1: a pushed request never holds a request_uri. At /authorize, only the pushed
 * authorization request endpoint's are read (the `pushed-request` step); any other, OAuth 2.0 or
 * OpenID Connect, is refused rather than ignored, so no client believes the parameters it points to
 * were obeyed.
 */
export function refuseRequestUri(draft: RequestDraft): StepError | undefined {
  if (single(draft.params, 'request_uri').value === undefined) return undefined;
  if (draft.pushing) {
    return { error: 'invalid_request', description: 'request_uri must not be sent in a pushed request' };
  }
  return {
    error: 'request_uri_not_supported',
    description: 'request_uri is supported only as returned by the pushed authorization request endpoint',
  };
}
