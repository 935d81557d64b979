import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ccResults, type CcRun } from '../lib/cc-results.js';
import { bracketOfResult, cpuPerRequest, throughputRatio } from '../lib/cost.js';
import { OAUTH2_SERVER_PEER, OIDC_PROVIDER_PEER, ServerProcess, freePort } from '../lib/processes.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { BenchContext, Check, Measured, MemorySample, Row, Scenario, Target } from '../lib/types.js';
import { verifyTokenCheck } from '../lib/verify-token.js';

/** The resource bench/peers/oidc-provider.ts issues every token for (its `aud`). */
const OIDC_PROVIDER_RESOURCE = 'https://api.bench.invalid/';

function versionOf(pkg: string): string {
  try {
    return (createRequire(import.meta.url)(`${pkg}/package.json`) as { version: string }).version;
  } catch {
    return '?';
  }
}

interface PeerRun {
  row: Row;
  checks: Check[];
  memory: MemorySample[];
}

/**
 * Starts a peer on the servers' core with the bench's certificate and client, measures it under the
 * client_credentials scenario's load (same request, connections, warm-up and duration), then stops it.
 */
async function measurePeer(
  context: BenchContext,
  peer: { label: string; script: string; name: string },
  verify: (server: ServerProcess, sample: string | undefined) => Promise<Check>,
): Promise<PeerRun> {
  const client = context.clients.clientCredentials;
  const port = await freePort();
  const server = await ServerProcess.start({
    label: peer.label,
    port,
    cpus: context.serverCpus,
    ca: () => context.ca,
    args: [
      peer.script,
      '--port',
      String(port),
      '--cert',
      join(context.dataDir, 'tls', 'cert.pem'),
      '--key',
      join(context.dataDir, 'tls', 'key.pem'),
      '--client-id',
      client.id,
      '--client-secret',
      client.secret,
    ],
  });
  try {
    const idle = server.rssBytes();
    let sample: string | undefined;
    const [result] = await context.measure(server, [
      { ...clientCredentialsRequest(client), onFirstSuccess: (body) => (sample = body) },
    ]);
    const measured = result!;
    const loaded = server.rssBytes();
    const failures = measured.non2xx + measured.warmupNon2xx + measured.errors;
    return {
      row: { scenario: 'peers', label: peer.name, result: measured },
      checks: [
        {
          name: `${peer.label}: every response 200`,
          pass: failures === 0,
          detail: `${measured.requests} responses, ${measured.non2xx} non-2xx, ${measured.warmupNon2xx} non-2xx in warm-up, ${measured.errors} errors`,
        },
        await verify(server, sample),
      ],
      memory: [
        { server: peer.name, when: 'idle, just started', rssBytes: idle },
        { server: peer.name, when: 'after its loaded run', rssBytes: loaded },
      ],
    };
  } finally {
    await server.stop();
  }
}

/** An opaque token response as RFC 6749 §5.1 has it: a bearer token, its lifetime. */
function opaqueTokenCheck(name: string, sample: string | undefined): Check {
  try {
    if (sample === undefined) throw new Error('no successful response was sampled');
    const body = JSON.parse(sample) as Record<string, unknown>;
    const token = body.access_token;
    if (typeof token !== 'string' || token.length < 32) throw new Error('no access_token of 32+ characters');
    if (String(body.token_type).toLowerCase() !== 'bearer')
      throw new Error(`token_type ${String(body.token_type)}`);
    if (body.expires_in !== 3600) throw new Error(`expires_in ${String(body.expires_in)}`);
    return { name, pass: true, detail: `opaque bearer token of ${token.length} characters, expires_in 3600` };
  } catch (err) {
    return { name, pass: false, detail: (err as Error).message };
  }
}

/** Gatehouse's run `gatehouse` / `peer` requests/s ratio, or a "not judged" when either is missing. */
function comparison(run: CcRun, peer: Measured, peerName: string, threshold: number | undefined): Target {
  const gatehouse = ccResults.get(run);
  const name =
    threshold === undefined
      ? `client_credentials (${run}) next to ${peerName}`
      : `client_credentials (${run}) >= ${peerName} requests/s`;
  return {
    name,
    target: threshold === undefined ? 'reported (no threshold)' : `>= ${threshold.toFixed(2)} x ${peerName}`,
    judge: (bracket) => {
      if (gatehouse === undefined) {
        const id = run.startsWith('SQLite') ? 'cc' : 'cc-pg';
        return { measured: `not measured in this run (add ${id} to --only)`, pass: true, reported: true };
      }
      const ratio = gatehouse.rps / peer.rps;
      return {
        measured:
          `${ratio.toFixed(2)} x (${Math.round(gatehouse.rps).toLocaleString('en')} vs ` +
          `${Math.round(peer.rps).toLocaleString('en')}/s); CPU per request ` +
          `${Math.round(cpuPerRequest(gatehouse))} vs ${Math.round(cpuPerRequest(peer))} us; ` +
          // Each next to its own bare runs: what the ratio would be with the machine alike for both.
          `x bare ${throughputRatio(gatehouse, bracketOfResult.get(gatehouse)).toFixed(3)} vs ` +
          `${throughputRatio(peer, bracket).toFixed(3)}`,
        pass: threshold === undefined || ratio >= threshold,
        ...(threshold === undefined ? { reported: true } : {}),
      };
    },
  };
}

/**
 * Issue 17: Gatehouse next to other Node.js OAuth servers, in the same run, over the same HTTPS, on the
 * same pinned core, with the same load as the Gatehouse client_credentials rows (run right after them,
 * and bracketed by bare Fastify like every scenario). The peers live in bench/peers/.
 */
export const peersScenario: Scenario = {
  id: 'peers',
  title: 'client_credentials on peer servers: @node-oauth/oauth2-server 5, oidc-provider 9',
  async run(context) {
    const oauth2ServerName = `@node-oauth/oauth2-server ${versionOf('@node-oauth/oauth2-server')} (Express), opaque tokens, in-memory, 1 core`;
    const oidcProviderName = `oidc-provider ${versionOf('oidc-provider')} (Koa), JWT ES256, in-memory, 1 core`;
    const oauth2Server = await measurePeer(
      context,
      { label: 'oauth2-server', script: OAUTH2_SERVER_PEER, name: oauth2ServerName },
      async (_server, sample) =>
        opaqueTokenCheck('oauth2-server: a token from the run is well formed', sample),
    );
    const oidcProvider = await measurePeer(
      context,
      { label: 'oidc-provider', script: OIDC_PROVIDER_PEER, name: oidcProviderName },
      (server, sample) =>
        verifyTokenCheck({
          name: 'oidc-provider: a token from the run verifies',
          serverUrl: server.url,
          issuer: server.url.replace('127.0.0.1', 'localhost'),
          audience: OIDC_PROVIDER_RESOURCE,
          ca: context.ca,
          responseBody: sample,
          clientId: context.clients.clientCredentials.id,
        }),
    );
    const a = oauth2Server.row.result;
    const b = oidcProvider.row.result;
    const runs: CcRun[] = ['SQLite, rate limits counted', 'PostgreSQL, rate limits counted'];
    return {
      rows: [oauth2Server.row, oidcProvider.row],
      checks: [...oauth2Server.checks, ...oidcProvider.checks],
      memory: [...oauth2Server.memory, ...oidcProvider.memory],
      targets: [
        ...runs.map((run) => comparison(run, a, '@node-oauth/oauth2-server', 1)),
        ...runs.map((run) => comparison(run, b, 'oidc-provider', undefined)),
      ],
      notes: [
        'peers: each peer answers the Gatehouse client_credentials request (HTTP Basic, the same client id and secret, ' +
          "grant_type=client_credentials) on node:https with the bench certificate and Fastify's keep-alive timing, " +
          'pinned like Gatehouse; configuration in bench/peers/. @node-oauth/oauth2-server keeps its opaque tokens in a Map; ' +
          'oidc-provider signs ES256 JWT access tokens (RFC 8707 resource indicator, stored nowhere). The Gatehouse rows they are ' +
          'compared with are the cc and cc-pg rows of this run, measured minutes earlier under the same load.',
      ],
    };
  },
};
