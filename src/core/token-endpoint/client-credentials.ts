import { resolveScopeForResources, urisOf } from '../scopes/resources.js';
import { parseScope } from '../scopes/scopes.js';
import type { GrantHandler } from './grant-handler.js';

/**
 * RFC 6749 §4.4: the client acts for itself; never a refresh token (§4.4.3). RFC 8707 §2: `resource`
 * names the resource servers the token is for, its `aud`.
 */
export const clientCredentialsGrant = {
  grantType: 'client_credentials',
  allowsPublicClients: false,
  async handle({ client, params, resources: resourceValues, dpop }, { issuer, resources }) {
    const asked = parseScope(params.scope);
    // No `resource` (the usual request): no targets, without a lookup's two promises.
    const targets = resourceValues.length === 0 ? [] : await resources.resolve(resourceValues);
    const scope = resolveScopeForResources(asked, client.scopes, targets);
    return issuer.issueAccessToken({
      client,
      subject: client.id,
      scope,
      resources: urisOf(targets),
      withRefreshToken: false,
      // RFC 9449 §5: bound to the key of the request's proof, if it sent one.
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    });
  },
} satisfies GrantHandler;
