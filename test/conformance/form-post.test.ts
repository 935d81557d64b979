import { runPlan } from './plan.js';
import { BASIC_PLAN, formPostPlan, HYBRID_PLAN, IMPLICIT_PLAN } from './plans.js';

// The Form Post OP plans (oidcc-formpost-basic/implicit/hybrid-certification-test-plan): the Basic,
// Implicit and Hybrid plans with response_mode=form_post (OAuth 2.0 Form Post Response Mode §2), the
// relying party receiving each response as a POSTed form. Every module runs for code, id_token token
// and code id_token token; the other response types run the modules whose answer travels differently
// (see formPostPlan).
const plan = (label: string, entries: ReturnType<typeof formPostPlan>) =>
  entries.map((entry) => ({ ...entry, plan: label }));

runPlan('OpenID Connect conformance: Form Post OP plans', [
  ...plan('Form Post Basic', formPostPlan(BASIC_PLAN, 'code')),
  ...plan('Form Post Implicit', formPostPlan(IMPLICIT_PLAN, 'id_token token')),
  ...plan('Form Post Hybrid', formPostPlan(HYBRID_PLAN, 'code id_token token')),
]);
