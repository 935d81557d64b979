import { generateKeyPairSync, randomBytes } from 'node:crypto';

/**
 * node-oidc-provider 9's configuration for the upstream identity providers Gatehouse signs people in
 * through (decision 40): in the tests (upstream-providers.ts) and in the `federated` benchmark's peer
 * (bench/peers/oidc-upstream.ts), so that the bench measures against the upstream the tests prove.
 *
 * The code flow with PKCE required (S256), ID tokens signed with a fresh ES256 key carrying `acr` and
 * `amr` in every token (not only when asked for with the claims parameter), userinfo, the scopes
 * openid/email/profile, its own interaction URL (`/interaction/:uid`, answered by the caller), and
 * consent given without asking (every scope requested is granted).
 */
export interface OidcProviderConfigurationOptions {
  /** `findAccount` as oidc-provider takes it: the account of a subject, or undefined. */
  findAccount: (ctx: unknown, subject: string) => unknown;
  /** Static clients (oidc-provider's `clients`); or an adapter that holds them. */
  clients?: Record<string, unknown>[];
  adapter?: unknown;
  /** `acr_values_supported`. */
  acrValues?: string[];
  /** The signing key's kid. */
  kid?: string;
}

/** The subset of oidc-provider's Koa context loadExistingGrant reads. */
interface GrantContext {
  oidc: {
    params: { scope?: unknown };
    client: { clientId: string };
    session: { accountId?: string };
    provider: {
      Grant: new (properties: { clientId: string; accountId: string | undefined }) => {
        addOIDCScope(scope: string): void;
        save(): Promise<string>;
      };
    };
  };
}

export function oidcProviderConfiguration(
  options: OidcProviderConfigurationOptions,
): Record<string, unknown> {
  const signingKey = {
    ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
    kid: options.kid ?? `upstream-${randomBytes(4).toString('hex')}`,
    alg: 'ES256',
    use: 'sig',
  };
  return {
    ...(options.clients === undefined ? {} : { clients: options.clients }),
    ...(options.adapter === undefined ? {} : { adapter: options.adapter }),
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: {
      acr: null,
      amr: null,
      auth_time: null,
      sid: null,
      openid: ['sub', 'acr', 'amr'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
    },
    ...(options.acrValues === undefined ? {} : { acrValues: options.acrValues }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    loadExistingGrant: async (ctx: GrantContext) => {
      const { oidc } = ctx;
      const grant = new oidc.provider.Grant({
        clientId: oidc.client.clientId,
        accountId: oidc.session.accountId,
      });
      grant.addOIDCScope(typeof oidc.params.scope === 'string' ? oidc.params.scope : 'openid');
      await grant.save();
      return grant;
    },
    findAccount: options.findAccount,
    // Numbers rather than oidc-provider's default functions, which log a notice each.
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
  };
}
