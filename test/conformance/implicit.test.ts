import { runPlan } from './plan.js';
import { IMPLICIT_PLAN } from './plans.js';

// oidcc-implicit-certification-test-plan: its modules for response_type=id_token and for
// id_token token (plus the UserInfo modules and oidcc-response-type-missing for id_token token), on
// every store.
runPlan('OpenID Connect conformance: Implicit OP plan', IMPLICIT_PLAN);
