import type { GatehouseConfig } from '../config.js';
import type { EnginePolicy } from '../core/engine.js';
import { ENDPOINTS, endpointUrl } from '../config/endpoints.js';
import { deriveKey } from '../shared/crypto.js';

/** The purpose-bound keys derived from the one server secret. */
export function deriveServerKeys(secret: Buffer) {
  return {
    keyEncryptionKey: deriveKey(secret, 'signing-key-encryption'),
    macSecret: deriveKey(secret, 'mac-keys'),
    cookieSecret: deriveKey(secret, 'cookies'),
    dpopNonceKey: deriveKey(secret, 'dpop-nonces'),
    // Decision 34: the authenticator apps' secrets are sealed (AES-256-GCM) and the recovery codes'
    // hashes keyed, each under its own subkey.
    totpKey: deriveKey(secret, 'totp-secrets'),
    recoveryCodeKey: deriveKey(secret, 'recovery-codes'),
    // Decision 39: upstream identity providers' client secrets and private keys are sealed under it.
    identityProviderKey: deriveKey(secret, 'identity-provider-secrets'),
  };
}

/** The engine's policy: the configuration's values for the rules, and the keys derived from the secret. */
export function enginePolicy(config: GatehouseConfig): EnginePolicy {
  const keys = deriveServerKeys(config.secret);
  // Gatehouse, and the name the pages show for it (GATEHOUSE_PRODUCT_NAME) when the operator renamed it:
  // no self-registered client nor document's client may take it, nor one that looks like it.
  const reservedNames = [...new Set(['Gatehouse', config.productName])];
  return {
    issuer: config.issuer,
    // Their URLs as the endpoint table has them: where the routes are served and the metadata says
    // they are (the audiences of client assertions and DPoP proofs there).
    tokenEndpoint: endpointUrl(config.issuer, ENDPOINTS.token),
    pushedAuthorizationRequestEndpoint: endpointUrl(config.issuer, ENDPOINTS.pushedAuthorizationRequest),
    // Decision 47: /v1's resource identifier, another name of the issuer's own API.
    managementApi: endpointUrl(config.issuer, ENDPOINTS.managementApi),
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
      verificationUri: endpointUrl(config.issuer, ENDPOINTS.deviceVerification),
    },
    macSecret: keys.macSecret,
    macTimestampWindowSeconds: config.macTimestampWindowSeconds,
    dynamicRegistration: {
      policy: config.dynamicRegistration,
      scopes: config.dynamicRegistrationScopes,
      reservedNames,
      allowPrivateJwksUri: config.allowPrivateJwksUri,
      clientConfigurationUri: (id) => endpointUrl(config.issuer, ENDPOINTS.registrationConfiguration, { id }),
    },
    // Decision 46: documents' clients are held to open registration's scopes and names.
    clientMetadataDocuments: {
      enabled: config.clientIdMetadataDocuments === 'on',
      hosts: config.clientIdMetadataHosts,
      issuer: config.issuer,
      scopes: config.dynamicRegistrationScopes,
      reservedNames,
      allowPrivateJwksUri: config.allowPrivateJwksUri,
    },
    mail: {
      productName: config.productName,
      passwordResetUrl: endpointUrl(config.issuer, ENDPOINTS.passwordReset),
      emailVerificationUrl: endpointUrl(config.issuer, ENDPOINTS.emailVerification),
    },
    secondFactors: {
      requireMfa: config.requireMfa,
      totpKey: keys.totpKey,
      recoveryCodeKey: keys.recoveryCodeKey,
      issuerName: config.productName,
    },
    identityProviders: {
      sealingKey: keys.identityProviderKey,
      // Decision 39: what the operator registers upstream, from the endpoint table.
      redirectUri: (id) => endpointUrl(config.issuer, ENDPOINTS.signInCallback, { id }),
    },
    keyRing: {
      keyEncryptionKey: keys.keyEncryptionKey,
      algorithm: config.signingAlgorithm,
      retiredKeyRetentionSeconds: config.retiredKeyRetentionSeconds,
      refreshIntervalSeconds: config.keyRefreshIntervalSeconds,
    },
  };
}
