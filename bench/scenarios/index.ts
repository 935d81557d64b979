import type { Scenario } from '../lib/types.js';
import { cliStartScenario } from './cli-start.js';
import { clientCredentialsPostgresScenario, clientCredentialsScenario } from './client-credentials.js';
import {
  codeFlowOpenIdPostgresScenario,
  codeFlowOpenIdScenario,
  codeFlowPostgresScenario,
  codeFlowScenario,
} from './code-flow.js';
import { introspectScenario } from './introspect.js';
import { leakScenario } from './leak.js';
import { peersScenario } from './peers.js';
import { clientCredentialsDpopScenario, rsDpopScenario } from './dpop.js';
import { federatedScenario } from './federated.js';
import { passkeyScenario } from './passkey.js';
import { passwordFloodScenario, passwordScenario } from './password.js';
import { purgePostgresScenario, purgeScenario } from './purge.js';
import { rsJwtScenario } from './rs-jwt.js';
import { totpSignInScenario } from './totp-sign-in.js';
import { workersScenario } from './workers.js';

/**
 * Every scenario `npm run bench` knows, in run order; `--only id,id` picks some. A new scenario is one
 * object here. The bare Fastify peer is not listed: run.ts always measures it first and last.
 */
export const SCENARIOS: Scenario[] = [
  clientCredentialsScenario,
  clientCredentialsPostgresScenario,
  // Right after the Gatehouse client_credentials rows they are compared with (issue 17).
  peersScenario,
  introspectScenario,
  clientCredentialsDpopScenario,
  passwordScenario,
  // Beside the password grant's row (issue 28 point 8).
  passkeyScenario,
  passwordFloodScenario,
  // Issue 28: sign-ins through the pages, beside the password grant above.
  totpSignInScenario,
  // Issue 29: a sign-in through an upstream provider, Gatehouse's own CPU (the upstream excluded).
  federatedScenario,
  workersScenario,
  codeFlowScenario,
  codeFlowOpenIdScenario,
  codeFlowPostgresScenario,
  codeFlowOpenIdPostgresScenario,
  rsJwtScenario,
  rsDpopScenario,
  purgeScenario,
  purgePostgresScenario,
  // Issue 26: no server load, only process starts.
  cliStartScenario,
  // Last: the longest (--leak-minutes, 10 by default).
  leakScenario,
];
