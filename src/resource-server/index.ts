/**
 * gatehouse/resource-server: protect a Node service with access tokens from Gatehouse.
 * The core imports only jose and node: modules; the Fastify and Express adapters need nothing of
 * their frameworks at run time.
 */
export {
  ResourceServer,
  IntrospectionUnavailableError,
  splitHost,
  type ResourceServerOptions,
  type RequestInfo,
  type VerifiedToken,
} from './resource-server.js';
export { TokenError, formatChallenge, extractCredential, type TokenErrorCode } from './rfc6750.js';
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
export { nodeFetch, type FetchLike } from './node-fetch.js';
export { gatehouseResourceServer, type FastifyResourceServerOptions } from './fastify.js';
export {
  expressResourceServer,
  type ConnectMiddleware,
  type ConnectRequest,
  type ConnectResponse,
} from './express.js';
