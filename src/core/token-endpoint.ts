import type { AuthenticatedClient, ClientCredentialsInput } from './client-auth.js';
import { invalidRequest, unauthorizedClient, unsupportedGrantType } from './errors.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { clientCredentialsGrant } from './grants/client-credentials.js';
import { deviceCodeGrant } from './grants/device-code.js';
import type { GrantContext, GrantHandler } from './grants/grant-handler.js';
import { passwordGrant } from './grants/password.js';
import { refreshTokenGrant } from './grants/refresh-token.js';
import { tokenExchangeGrant } from './grants/token-exchange.js';
import type { TokenResponse } from './token-issuer.js';

export const TOKEN_GRANT_HANDLERS: readonly GrantHandler[] = [
  authorizationCodeGrant,
  passwordGrant,
  clientCredentialsGrant,
  refreshTokenGrant,
  tokenExchangeGrant,
  deviceCodeGrant,
];

export interface TokenEndpointRequest {
  authorization: string | undefined;
  params: Readonly<Record<string, string | undefined>>;
  /** Every `resource` value of the request (RFC 8707 §2, repeatable); none when absent. */
  resources?: readonly string[];
  /** Every `audience` value of the request (RFC 8693 §2.1, repeatable); none when absent. */
  audiences?: readonly string[];
  /** The client's address, for the password grant's per-source counts. */
  address?: string;
}

/** Client authentication as the engine does it (Engine.authenticateClient, core/client-auth.ts). */
export type ClientAuthentication = (credentials: ClientCredentialsInput) => Promise<AuthenticatedClient>;

/** RFC 6749 §3.2: authenticate the client, pick the grant handler, let it decide. */
export class TokenEndpoint {
  private readonly handlers: ReadonlyMap<string, GrantHandler>;

  constructor(
    private readonly context: GrantContext,
    private readonly authenticateClient: ClientAuthentication,
    handlers: readonly GrantHandler[] = TOKEN_GRANT_HANDLERS,
  ) {
    const byType = new Map<string, GrantHandler>();
    for (const handler of handlers) {
      if (byType.has(handler.grantType)) throw new Error(`duplicate grant handler: ${handler.grantType}`);
      byType.set(handler.grantType, handler);
    }
    this.handlers = byType;
  }

  get grantTypes(): string[] {
    return [...this.handlers.keys()];
  }

  async handle(request: TokenEndpointRequest): Promise<TokenResponse> {
    const grantType = request.params.grant_type;
    if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
    const credentials: ClientCredentialsInput = {
      authorization: request.authorization,
      clientId: request.params.client_id,
      clientSecret: request.params.client_secret,
      clientAssertionType: request.params.client_assertion_type,
      clientAssertion: request.params.client_assertion,
    };
    // The token endpoint's own URL is always an accepted audience (the engine's policy).
    const { client } = await this.authenticateClient(credentials);
    const handler = this.handlers.get(grantType);
    if (handler === undefined) throw unsupportedGrantType(`grant_type not supported: ${grantType}`);
    if (!client.grantTypes.includes(handler.grantType)) {
      throw unauthorizedClient(`this client may not use the ${grantType} grant`);
    }
    if (client.isPublic && !handler.allowsPublicClients) {
      throw unauthorizedClient(`public clients may not use the ${grantType} grant`);
    }
    return handler.handle(
      {
        client,
        params: request.params,
        resources: request.resources ?? [],
        audiences: request.audiences ?? [],
        address: request.address ?? '',
      },
      this.context,
    );
  }
}
