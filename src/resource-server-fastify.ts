/**
 * `gatehouse-oauth/resource-server/fastify`: the library's Fastify plugin
 * (`gatehouse-oauth-resource-server/fastify`), re-exported beside `gatehouse-oauth/resource-server`,
 * whose entry names no web framework (docs/decisions.md, decision 16).
 */
export * from 'gatehouse-oauth-resource-server/fastify';
