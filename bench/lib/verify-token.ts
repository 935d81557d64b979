import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { httpsRequest } from './https.js';
import type { Check } from './types.js';

/**
 * Checks that a token the run received verifies against the server's own /jwks (RFC 9068 profile:
 * typ at+jwt, issuer and audience the server's URL) and names the expected client.
 */
export async function verifyTokenCheck(options: {
  name: string;
  serverUrl: string;
  issuer: string;
  /** The token's expected audience; the issuer when absent (Gatehouse's tokens without a resource). */
  audience?: string;
  ca: string;
  responseBody: string | undefined;
  clientId: string;
}): Promise<Check> {
  if (options.responseBody === undefined) {
    return { name: options.name, pass: false, detail: 'no successful response was sampled' };
  }
  try {
    const { access_token: token } = JSON.parse(options.responseBody) as { access_token?: string };
    if (typeof token !== 'string') throw new Error('response has no access_token');
    const jwks = await httpsRequest(`${options.serverUrl}/jwks`, { ca: options.ca });
    if (jwks.status !== 200) throw new Error(`/jwks answered ${jwks.status}`);
    const keySet = createLocalJWKSet(JSON.parse(jwks.body) as JSONWebKeySet);
    const { payload, protectedHeader } = await jwtVerify(token, keySet, {
      issuer: options.issuer,
      audience: options.audience ?? options.issuer,
      typ: 'at+jwt',
    });
    if (payload.client_id !== options.clientId) throw new Error('client_id claim is not the bench client');
    return {
      name: options.name,
      pass: true,
      detail: `${protectedHeader.alg} token verified with jose against /jwks (kid ${protectedHeader.kid ?? '-'})`,
    };
  } catch (err) {
    return { name: options.name, pass: false, detail: (err as Error).message };
  }
}
