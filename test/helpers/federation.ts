import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import { seal } from '../../src/core/keys/sealed-box.js';
import type { IdentityProvider } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { sealContext, type UpstreamIdentity } from '../../src/core/federation/upstream.js';

/** The claim mapping of an OpenID Provider: the standard claims (OpenID Connect Core §5.1). */
export const OIDC_MAPPING: IdentityProvider['claimMapping'] = {
  subject: 'sub',
  username: 'preferred_username',
  email: 'email',
  emailVerified: 'email_verified',
  name: 'name',
};

/**
 * An identity provider as the store keeps it (decision 40), an OpenID Provider at `issuer` unless
 * overridden; its client secret, when given, sealed as the registry seals it (the server secret's
 * identityProviderKey, sealContext).
 */
export function testProvider(
  overrides: Partial<IdentityProvider> & { id: string },
  options: { serverSecret?: Buffer; clientSecret?: string } = {},
): IdentityProvider {
  const now = overrides.createdAt ?? 1_800_000_000;
  const sealed =
    options.clientSecret === undefined || options.serverSecret === undefined
      ? null
      : seal(
          deriveServerKeys(options.serverSecret).identityProviderKey,
          Buffer.from(options.clientSecret),
          sealContext.clientSecret(overrides.id),
        );
  return {
    name: overrides.id,
    kind: 'oidc',
    issuer: `https://${overrides.id}.example`,
    authorizationEndpoint: null,
    tokenEndpoint: null,
    userinfoEndpoint: null,
    clientId: 'gatehouse',
    clientAuth: sealed === null ? 'none' : 'client_secret_basic',
    clientSecretSealed: sealed,
    privateKeySealed: null,
    publicJwk: null,
    scopes: ['openid', 'email', 'profile'],
    claimMapping: OIDC_MAPPING,
    linkByVerifiedEmail: false,
    trustUpstreamAssurance: false,
    requiredAcr: null,
    logoUri: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

/** Stores a provider (testProvider) directly, as `gatehouse idps create` would have. */
export async function insertProvider(
  storage: Pick<Storage, 'identityProviders'>,
  overrides: Partial<IdentityProvider> & { id: string },
  options: { serverSecret?: Buffer; clientSecret?: string } = {},
): Promise<IdentityProvider> {
  const provider = testProvider(overrides, options);
  if (!(await storage.identityProviders.insert(provider))) throw new Error(`provider ${provider.id} exists`);
  return provider;
}

/** An upstream person as the port reports one, at `provider`'s issuer. */
export function upstreamPerson(
  provider: Pick<IdentityProvider, 'issuer' | 'id'>,
  claims: Partial<UpstreamIdentity> & { subject: string },
): UpstreamIdentity {
  return {
    issuer: provider.issuer ?? `urn:gatehouse:idp:${provider.id}`,
    username: null,
    email: null,
    emailVerified: false,
    name: null,
    amr: null,
    acr: null,
    ...claims,
  };
}
