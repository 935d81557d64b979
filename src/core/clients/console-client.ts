import type { Client } from '../model.js';
import { ADMIN_SCOPE } from '../scopes/admin-scope.js';
import type { ClientRegistry } from './client-registry.js';

/** The admin console's own client id (docs/decisions.md, decision 42): fixed, so every process finds it. */
export const CONSOLE_CLIENT_ID = 'gatehouse-admin';
export const CONSOLE_CLIENT_NAME = 'Gatehouse admin console';

/** What the console's client must be: its callback under the issuer, and the second-factor policy. */
export interface ConsoleClientSpec {
  redirectUri: string;
  requireMfa: boolean;
}

/**
 * Whether a client is the console's built-in one. The authorization endpoint skips the consent page
 * for it: the console is Gatehouse itself, whose administrator already chose to sign in to it, and
 * `admin` is only ever granted to an administrator (decision 29).
 */
export function isConsoleClient(client: Pick<Client, 'id' | 'registration'>): boolean {
  return client.id === CONSOLE_CLIENT_ID && client.registration === 'operator';
}

function matches(client: Client, spec: ConsoleClientSpec): boolean {
  return (
    client.isPublic &&
    client.redirectUris.length === 1 &&
    client.redirectUris[0] === spec.redirectUri &&
    client.grantTypes.length === 1 &&
    client.grantTypes[0] === 'authorization_code' &&
    client.scopes.length === 1 &&
    client.scopes[0] === ADMIN_SCOPE &&
    client.requireMfa === spec.requireMfa &&
    !client.requirePushedAuthorizationRequests &&
    !client.dpopBoundAccessTokens
  );
}

/**
 * The console's client, made on first use and put back as the spec says when an operator changed it
 * (or the settings did): a public client with PKCE (RFC 7636; RFC 8252 §8.1 for a client that keeps
 * no secret), the authorization code grant only, scope `admin` only, its one redirect URI the
 * issuer's `/admin/callback`, and `require_mfa` as GATEHOUSE_ADMIN_REQUIRE_MFA says. A client an
 * operator deleted comes back; one whose id another process inserted meanwhile is read again.
 */
export async function ensureConsoleClient(clients: ClientRegistry, spec: ConsoleClientSpec): Promise<Client> {
  const existing = await clients.get(CONSOLE_CLIENT_ID);
  if (existing !== undefined && matches(existing, spec)) return existing;
  const input = {
    name: existing?.name ?? CONSOLE_CLIENT_NAME,
    redirect_uris: [spec.redirectUri],
    grant_types: ['authorization_code'],
    scopes: [ADMIN_SCOPE],
    public: true,
    require_mfa: spec.requireMfa,
  };
  if (existing !== undefined) return (await clients.replace(existing, input)).client;
  try {
    return (await clients.createWithId(CONSOLE_CLIENT_ID, input)).client;
  } catch (error) {
    const raced = await clients.get(CONSOLE_CLIENT_ID);
    if (raced !== undefined) return raced;
    throw error;
  }
}
