import { costRatio, cpuPerRequest, throughputRatio } from '../lib/cost.js';
import { httpsRequest } from '../lib/https.js';
import { basicAuth, clientCredentialsRequest } from '../lib/token-requests.js';
import type { BenchContext, Check, Scenario } from '../lib/types.js';

/** Target (issue 17): introspection of a JWT access token at >= 1/2 of bare Fastify's requests/s. */
const MIN_RATIO = 1 / 2;

/** A real access token from the pinned Gatehouse (client_credentials), as a resource server holds it. */
async function issueToken(context: BenchContext): Promise<string> {
  const spec = clientCredentialsRequest(context.clients.clientCredentials);
  const response = await httpsRequest(`${context.gatehouse.url}${spec.path}`, {
    ca: context.ca,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
  });
  if (response.status !== 200) throw new Error(`introspect: POST /token answered ${response.status}`);
  const token = (JSON.parse(response.body) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') throw new Error('introspect: token response without access_token');
  return token;
}

/** RFC 7662 §2.2: the sampled answer says the token is active, for the bench client. */
function activeCheck(sample: string | undefined, clientId: string): Check {
  const name = 'introspect: the token is reported active';
  try {
    if (sample === undefined) throw new Error('no successful response was sampled');
    const body = JSON.parse(sample) as { active?: unknown; client_id?: unknown; token_type?: unknown };
    if (body.active !== true) throw new Error(`active is ${String(body.active)}`);
    if (body.client_id !== clientId) throw new Error('client_id is not the bench client');
    return {
      name,
      pass: true,
      detail: `active: true, client_id the bench client, token_type ${String(body.token_type)}`,
    };
  } catch (err) {
    return { name, pass: false, detail: (err as Error).message };
  }
}

/**
 * POST /introspect (RFC 7662) of a valid JWT access token, on the shared SQLite Gatehouse (rate limits
 * counted), the caller authenticating with client_secret_basic (the client the token was issued to, as
 * a resource server registered as a confidential client would), under the client_credentials load.
 */
export const introspectScenario: Scenario = {
  id: 'introspect',
  title: 'token introspection of a JWT access token, Basic auth, SQLite',
  async run(context) {
    const client = context.clients.clientCredentials;
    const token = await issueToken(context);
    let sample: string | undefined;
    const [result] = await context.measure(context.gatehouse, [
      {
        path: '/introspect',
        method: 'POST',
        headers: { authorization: basicAuth(client), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        onFirstSuccess: (body) => (sample = body),
      },
    ]);
    const measured = result!;
    const failures = measured.non2xx + measured.warmupNon2xx + measured.errors;
    return {
      rows: [
        {
          scenario: 'introspect',
          label: 'introspection (JWT access token), SQLite, 1 core, rate limits counted',
          result: measured,
        },
      ],
      checks: [
        {
          name: 'introspect: every response 200',
          pass: failures === 0,
          detail:
            `${measured.requests} responses (${Object.entries(measured.statusCodes)
              .map(([code, count]) => `${code}: ${count}`)
              .join(', ')}); ${measured.non2xx} non-2xx, ` +
            `${measured.warmupNon2xx} non-2xx in warm-up, ${measured.errors} errors`,
        },
        activeCheck(sample, client.id),
      ],
      targets: [
        {
          name: 'introspection (JWT, SQLite) >= 1/2 of bare Fastify',
          target: '>= 0.5 x bare requests/s',
          judge: (bracket) => ({
            measured:
              `${throughputRatio(measured, bracket).toFixed(3)} x bare ` +
              `(${Math.round(measured.rps).toLocaleString('en')}/s); CPU per request ` +
              `${Math.round(cpuPerRequest(measured))} us vs bare ${Math.round(bracket.cpuPerRequest)} us ` +
              `(by CPU per request: ${costRatio(measured, bracket).toFixed(3)} x)`,
            pass: throughputRatio(measured, bracket) >= MIN_RATIO,
          }),
        },
      ],
    };
  },
};
