/** Domain records. Times are seconds since the epoch; scopes are arrays of scope names. */

export const GRANT_TYPES = [
  'authorization_code',
  'implicit',
  'password',
  'client_credentials',
  'refresh_token',
] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export const TOKEN_TYPES = ['bearer', 'mac'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

export interface Client {
  id: string;
  name: string;
  /** SHA-256 of the secret; null for a public client. */
  secretHash: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  scopes: string[];
  tokenType: TokenType;
  isPublic: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface User {
  id: string;
  username: string;
  /** PHC string: algorithm and cost parameters travel with each hash. */
  passwordHash: string;
  createdAt: number;
  updatedAt: number;
}

export interface Scope {
  name: string;
  description: string;
  createdAt: number;
}

/**
 * What a resource owner (or, for the password grant, a login) authorized a client to do.
 * Every refresh and access token is issued under a grant and dies with it.
 */
export interface Grant {
  id: string;
  clientId: string;
  userId: string;
  scope: string[];
  createdAt: number;
  /** The lifetime the user chose; null means "until I revoke it". */
  expiresAt: number | null;
  revokedAt: number | null;
}

export interface AuthorizationCode {
  hash: string;
  clientId: string;
  userId: string;
  grantId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | 'plain' | null;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

export interface RefreshToken {
  hash: string;
  grantId: string;
  clientId: string;
  userId: string;
  scope: string[];
  createdAt: number;
  expiresAt: number | null;
  /** Set when the token was rotated or revoked; a retired token never issues again. */
  retiredAt: number | null;
}

/** A signed-in browser. The cookie holds a random id; only its SHA-256 is stored. */
export interface BrowserSession {
  hash: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
}

export interface SigningKeyRecord {
  kid: string;
  alg: 'ES256' | 'EdDSA' | 'RS256';
  publicJwk: Record<string, string>;
  /** AES-256-GCM sealed PKCS#8 DER, base64url(iv | tag | ciphertext). */
  privateKeySealed: string;
  createdAt: number;
  retiredAt: number | null;
  /** Set when an operator revoked the key (compromised): it no longer signs or verifies anything. */
  revokedAt: number | null;
}
