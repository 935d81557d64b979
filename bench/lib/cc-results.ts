import type { Measured } from './types.js';

/** The Gatehouse client_credentials runs a bench run has made, for the scenarios that compare with them. */
export type CcRun =
  | 'SQLite, rate limits counted'
  | 'SQLite, rate limits off'
  | 'PostgreSQL, rate limits counted'
  | 'PostgreSQL, rate limits off';

/**
 * Filled by the cc and cc-pg scenarios, read by those after them (PostgreSQL next to SQLite; the
 * peers). A scenario run without the ones it compares with says so instead of judging.
 */
export const ccResults = new Map<CcRun, Measured>();
