import type { GatehouseConfig } from '../config.js';
import type { EnginePolicy } from '../core/engine.js';
import { deriveKey } from '../shared/crypto.js';

/** The purpose-bound keys derived from the one server secret. */
export function deriveServerKeys(secret: Buffer) {
  return {
    keyEncryptionKey: deriveKey(secret, 'signing-key-encryption'),
    macSecret: deriveKey(secret, 'mac-keys'),
    cookieSecret: deriveKey(secret, 'cookies'),
    dpopNonceKey: deriveKey(secret, 'dpop-nonces'),
  };
}

/** The engine's policy: the configuration's values for the rules, and the keys derived from the secret. */
export function enginePolicy(config: GatehouseConfig): EnginePolicy {
  const keys = deriveServerKeys(config.secret);
  return {
    issuer: config.issuer,
    // Where http/oauth/token-route.ts serves it, and the metadata says it is.
    tokenEndpoint: `${config.issuer}/token`,
    // Where http/oauth/par-route.ts serves it.
    pushedAuthorizationRequestEndpoint: `${config.issuer}/par`,
    dpop: {
      proofWindowSeconds: config.dpopProofWindowSeconds,
      nonce: config.dpopNonce,
      nonceKey: keys.dpopNonceKey,
    },
    accessTokenTtl: config.accessTokenTtl,
    idTokenTtl: config.idTokenTtl,
    refreshTokenTtl: config.refreshTokenTtl,
    authorizationCodeTtl: config.authorizationCodeTtl,
    refreshReuseGraceSeconds: config.refreshReuseGraceSeconds,
    passwordFailuresPerUsername: config.passwordFailuresPerUsername,
    passwordFailuresPerSource: config.passwordFailuresPerSource,
    passwordFailureWindowSeconds: config.passwordFailureWindowSeconds,
    allowPlainPkce: config.allowPlainPkce,
    pushedAuthorizationRequestTtl: config.pushedAuthorizationRequestTtl,
    requirePushedAuthorizationRequests: config.requirePushedAuthorizationRequests,
    allowPublicPasswordGrant: config.allowPublicPasswordGrant,
    deviceAuthorization: {
      ttl: config.deviceCodeTtl,
      interval: config.deviceCodeInterval,
      userCodeFailuresPerSource: config.userCodeFailuresPerSource,
      userCodeFailureWindowSeconds: config.userCodeFailureWindowSeconds,
    },
    macSecret: keys.macSecret,
    macTimestampWindowSeconds: config.macTimestampWindowSeconds,
    dynamicRegistration: {
      policy: config.dynamicRegistration,
      scopes: config.dynamicRegistrationScopes,
      // Gatehouse, and the name the pages show for it (GATEHOUSE_PRODUCT_NAME) when the operator renamed it.
      reservedNames: [...new Set(['Gatehouse', config.productName])],
      allowPrivateJwksUri: config.allowPrivateJwksUri,
    },
    keyRing: {
      keyEncryptionKey: keys.keyEncryptionKey,
      algorithm: config.signingAlgorithm,
      retiredKeyRetentionSeconds: config.retiredKeyRetentionSeconds,
      refreshIntervalSeconds: config.keyRefreshIntervalSeconds,
    },
  };
}
