/**
 * `gatehouse-oauth/resource-server`: the resource-server library, published on its own as
 * `gatehouse-oauth-resource-server` (docs/decisions.md, decision 16), re-exported here so that an
 * application that installed the server has it under a short path.
 */
export * from 'gatehouse-oauth-resource-server';
