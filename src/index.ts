/**
 * The package's entry point: embed Gatehouse in a Node.js process. `createGatehouse(loadConfig())` is
 * what `gatehouse serve` runs; the resource-server library is `gatehouse-oauth-resource-server`
 * (also re-exported as `gatehouse-oauth/resource-server`).
 */
export { createGatehouse, type Gatehouse, type GatehouseOptions } from './compose/gatehouse.js';
export { ConfigError, loadConfig, type ConfigInput, type GatehouseConfig } from './config.js';
