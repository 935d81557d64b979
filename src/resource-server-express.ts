/**
 * `gatehouse-oauth/resource-server/express`: the library's Express/Connect middleware
 * (`gatehouse-oauth-resource-server/express`), re-exported beside `gatehouse-oauth/resource-server`,
 * whose entry names no web framework (docs/decisions.md, decision 16).
 */
export * from 'gatehouse-oauth-resource-server/express';
