import {
  formClientCredentials,
  type AuthenticatedClient,
  type ClientCredentialsInput,
} from '../clients/client-auth.js';
import type { DpopProof, DpopVerifier } from '../tokens/dpop.js';
import { dpopProofError, invalidRequest, unauthorizedClient, unsupportedGrantType } from '../errors.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { deviceCodeGrant } from './device-code.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';
import { passwordGrant } from './password.js';
import { refreshTokenGrant } from './refresh-token.js';
import type { Client } from '../model.js';
import { tokenExchangeGrant } from './token-exchange.js';
import type { TokenResponse } from '../tokens/token-issuer.js';

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
  /** Every `DPoP` header field value of the request (RFC 9449 §4.1); none when absent. */
  dpopProofs?: readonly string[];
}

/** The token endpoint's side of RFC 9449: the proof rules and the URL proofs must name. */
export interface TokenEndpointDpop {
  verifier: DpopVerifier;
  /** The token endpoint's URL, from the issuer: what a proof's `htu` must be (§4.3 item 9). */
  endpointUrl: string;
}

/** Client authentication as the engine does it (Engine.authenticateClient, core/clients/client-auth.ts). */
export type ClientAuthentication = (credentials: ClientCredentialsInput) => Promise<AuthenticatedClient>;

/** RFC 6749 §3.2: authenticate the client, pick the grant handler, let it decide. */
export class TokenEndpoint {
  private readonly handlers: ReadonlyMap<string, GrantHandler>;

  constructor(
    private readonly context: GrantContext,
    private readonly authenticateClient: ClientAuthentication,
    private readonly dpop: TokenEndpointDpop,
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
    // The token endpoint's own URL is always an accepted audience (the engine's policy).
    const { client } = await this.authenticateClient(
      formClientCredentials((name) => request.params[name], request.authorization),
    );
    const handler = this.handlers.get(grantType);
    if (handler === undefined) throw unsupportedGrantType(`grant_type not supported: ${grantType}`);
    if (!client.grantTypes.includes(handler.grantType)) {
      throw unauthorizedClient(`this client may not use the ${grantType} grant`);
    }
    if (client.isPublic && !handler.allowsPublicClients) {
      throw unauthorizedClient(`public clients may not use the ${grantType} grant`);
    }
    const dpop = await this.verifyProof(client, request.dpopProofs ?? []);
    return handler.handle(
      {
        client,
        params: request.params,
        resources: request.resources ?? [],
        audiences: request.audiences ?? [],
        address: request.address ?? '',
        dpop,
      },
      this.context,
    );
  }

  /** The nonce successful responses carry (RFC 9449 §8), when nonces are on. */
  dpopNonce(): string | undefined {
    return this.dpop.verifier.nonce();
  }

  /**
   * RFC 9449 §5: the request's proof, checked against this endpoint; undefined when it has none. A
   * client registered with dpop_bound_access_tokens must send one (§5.2).
   */
  private async verifyProof(client: Client, proofs: readonly string[]): Promise<DpopProof | undefined> {
    if (proofs.length === 0) {
      if (client.dpopBoundAccessTokens) {
        throw dpopProofError(
          'invalid_dpop_proof',
          'this client must send a DPoP proof (dpop_bound_access_tokens)',
        );
      }
      return undefined;
    }
    // A MAC token has its own key; one token cannot be both (docs/decisions.md, decision 3).
    if (client.tokenType === 'mac') {
      throw invalidRequest('this client is registered for MAC tokens; DPoP proofs do not apply to it');
    }
    const { verifier, endpointUrl } = this.dpop;
    return verifier.verifyAtAuthorizationServer({ proofs, method: 'POST', url: endpointUrl });
  }
}
