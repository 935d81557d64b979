import { parseScope, resolveScope } from '../scopes.js';
import type { GrantHandler } from './grant-handler.js';

/** RFC 6749 §4.4: the client acts for itself; never a refresh token (§4.4.3). */
export const clientCredentialsGrant = {
  grantType: 'client_credentials',
  allowsPublicClients: false,
  handle({ client, params }, { issuer }) {
    const scope = resolveScope(parseScope(params.scope), client.scopes);
    return issuer.issueAccessToken({ client, subject: client.id, scope, withRefreshToken: false });
  },
} satisfies GrantHandler;
