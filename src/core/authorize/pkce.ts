import { safeEqual, sha256 } from '../../shared/crypto.js';

// RFC 7636 §4.1: code-verifier = 43*128unreserved
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// An S256 challenge is base64url(SHA-256) without padding: exactly 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isValidCodeChallenge(challenge: string, method: CodeChallengeMethod): boolean {
  return method === 'S256' ? S256_CHALLENGE.test(challenge) : VERIFIER.test(challenge);
}

export function verifyCodeVerifier(
  verifier: string,
  challenge: string,
  method: CodeChallengeMethod,
): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const derived = method === 'S256' ? sha256(verifier) : verifier;
  return safeEqual(derived, challenge);
}

/** The code challenge methods of RFC 7636 §4.2. */
export type CodeChallengeMethod = 'S256' | 'plain';

/** An authorization request's `code_challenge` and `code_challenge_method` (RFC 7636 §4.3), as sent. */
export interface CodeChallengeParams {
  challenge: string | undefined;
  method: string | undefined;
}

/** What decides whether a request's PKCE parameters are accepted, besides the parameters. */
export interface PkceRules {
  /** A public client must send a challenge (RFC 9700 §2.1.1). */
  isPublic: boolean;
  /** The server's policy: whether `plain` is accepted; otherwise S256 only (RFC 9700 §2.1.1). */
  allowPlain: boolean;
}

/** A code challenge accepted with its request, for the code to carry to the token request (§4.4). */
export interface CodeChallenge {
  challenge: string;
  method: CodeChallengeMethod;
}

/**
 * The outcome of checkCodeChallenge: the challenge accepted (null when none was sent and none is
 * required), or why the request is refused, always with invalid_request (RFC 7636 §4.4.1).
 */
export type CodeChallengeCheck =
  { ok: true; challenge: CodeChallenge | null } | { ok: false; description: string };

/** RFC 7636 §4.3: the method defaults to plain when absent; undefined when it names none of §4.2's. */
export function codeChallengeMethodOf(method: string | undefined): CodeChallengeMethod | undefined {
  const chosen = method ?? 'plain';
  return chosen === 'S256' || chosen === 'plain' ? chosen : undefined;
}

/** Whether the server takes a method: S256 always, plain only where its policy allows it. */
export function isAllowedCodeChallengeMethod(method: CodeChallengeMethod, allowPlain: boolean): boolean {
  return method === 'S256' || allowPlain;
}

/**
 * An authorization request's PKCE parameters (RFC 7636 §4.3, §4.4.1), checked in this order: a method
 * needs a challenge, a public client needs one (RFC 9700 §2.1.1), the method must be one the server
 * takes, and the challenge well formed for it.
 */
export function checkCodeChallenge(params: CodeChallengeParams, rules: PkceRules): CodeChallengeCheck {
  const refused = (description: string): CodeChallengeCheck => ({ ok: false, description });
  if (params.challenge === undefined) {
    if (params.method !== undefined) return refused('code_challenge_method without code_challenge');
    if (rules.isPublic) return refused('public clients must send a code_challenge (S256)');
    return { ok: true, challenge: null };
  }
  const method = codeChallengeMethodOf(params.method);
  if (method === undefined || !isAllowedCodeChallengeMethod(method, rules.allowPlain)) {
    return refused('code_challenge_method must be S256');
  }
  if (!isValidCodeChallenge(params.challenge, method)) return refused('malformed code_challenge');
  return { ok: true, challenge: { challenge: params.challenge, method } };
}
