import { safeEqual, sha256 } from '../shared/crypto.js';

// RFC 7636 §4.1: code-verifier = 43*128unreserved
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// An S256 challenge is base64url(SHA-256) without padding: exactly 43 characters.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isValidCodeChallenge(challenge: string, method: 'S256' | 'plain'): boolean {
  return method === 'S256' ? S256_CHALLENGE.test(challenge) : VERIFIER.test(challenge);
}

export function verifyCodeVerifier(verifier: string, challenge: string, method: 'S256' | 'plain'): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const derived = method === 'S256' ? sha256(verifier) : verifier;
  return safeEqual(derived, challenge);
}
