import { runPlan } from './plan.js';
import { HYBRID_PLAN } from './plans.js';

// oidcc-hybrid-certification-test-plan: its modules for response_type=code id_token, code token and
// code id_token token, on every store.
runPlan('OpenID Connect conformance: Hybrid OP plan', HYBRID_PLAN);
