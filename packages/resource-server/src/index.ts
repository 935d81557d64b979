/**
 * gatehouse-oauth-resource-server: protect a Node service with access tokens from Gatehouse.
 * It imports only jose and node: modules; the Fastify and Express adapters need nothing of their
 * frameworks at run time (Fastify's types only, an optional peer), so a service that validates
 * tokens installs none of the server's database drivers (docs/decisions.md, decision 16).
 * This entry is framework-free: the adapters are the subpaths `/fastify` and `/express`, so that the
 * types of a service that uses one framework never name the other's (Fastify is optional).
 * RFC 9449 DPoP: the `dpop` option accepts `Authorization: DPoP` with its proof; a DPoP-bound token
 * is never accepted as a bearer token.
 * The subpaths `/mac` and `/rfc6750` export the framework-free rules that the server's own /v1 API
 * shares with this library, so each rule has one copy; `/dpop-proof` and `/jwt-verifier` the
 * storage-free checks the server's engine shares (its DPoP proofs, its own access tokens);
 * `/protected-resource` the RFC 9728 document, which the server's /v1 publishes as well.
 */
export {
  ResourceServer,
  IntrospectionUnavailableError,
  splitHost,
  type ResourceServerOptions,
  type RequestInfo,
  type VerifiedToken,
} from './resource-server.js';
export {
  TokenError,
  formatChallenge,
  extractCredential,
  userAuthenticationProblem,
  type AuthenticationRequirements,
  type TokenErrorCode,
} from './rfc6750.js';
export {
  MemoryNonceStore,
  NonceStoreFullError,
  type MemoryNonceStoreOptions,
  parseMacHeader,
  signMacRequest,
  normalizedRequestString,
  type NonceStore,
  type MacAlgorithmName,
  type MacCredentials,
  type MacRequest,
} from './mac.js';
export {
  MemoryDpopReplayStore,
  DpopReplayStoreFullError,
  DEFAULT_DPOP_ALGORITHMS,
  accessTokenHash,
  type DpopReplayStore,
  type DpopNonceSource,
  type DpopOptions,
  type MemoryDpopReplayStoreOptions,
} from './dpop.js';
export { nodeFetch, type FetchLike } from './node-fetch.js';
export {
  createTokenExchanger,
  clientSecretBasic,
  TokenExchanger,
  TokenExchangeError,
  TOKEN_EXCHANGE_GRANT_TYPE,
  ACCESS_TOKEN_TYPE,
  type ClientAuthenticator,
  type ExchangeOptions,
  type ExchangedToken,
  type TokenExchangerOptions,
} from './token-exchanger.js';
export {
  ProtectedResource,
  PROTECTED_RESOURCE_WELL_KNOWN,
  type BearerMethod,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from './protected-resource.js';
