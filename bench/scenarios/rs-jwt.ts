import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpsRequest } from '../lib/https.js';
import { RS_JWT_PEER, runNodeJson } from '../lib/processes.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { BenchContext, Measured, Scenario } from '../lib/types.js';

/** Issue 5 §6: resource-server JWT validation in the library at >= 10,000/s per core. */
const MIN_PER_CPU_SECOND = 10_000;

interface PathResult {
  perSecond: number;
  /** Cores used while it ran (1.00 = one core busy). */
  cpu: number;
  perCpuSecond: number;
  count: number;
}

interface PeerOutput {
  library: PathResult;
  jose: PathResult;
  /** The ES256 signature check alone with synchronous node:crypto: the floor, for reference. */
  nodeCrypto: PathResult;
  /** The library with its validated-token cache, the same token again: not what is judged. */
  cachedLibrary: PathResult;
  concurrency: number;
}

/** A row for an in-process loop: no latency, no driver; CPU per request is CPU per validation. */
function asMeasured(result: PathResult, seconds: number): Measured {
  return {
    rps: result.perSecond,
    p50: NaN,
    p90: NaN,
    p99: NaN,
    max: NaN,
    requests: result.count,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
    seconds,
    serverCpu: result.cpu,
    loopCpu: NaN,
    driverCpu: NaN,
    warmupNon2xx: 0,
    concurrent: false,
  };
}

/** A real access token from the pinned Gatehouse (client_credentials), as a resource server gets it. */
async function issueToken(context: BenchContext): Promise<string> {
  const spec = clientCredentialsRequest(context.clients.clientCredentials);
  const response = await httpsRequest(`${context.gatehouse.url}${spec.path}`, {
    ca: context.ca,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
  });
  if (response.status !== 200) throw new Error(`rs-jwt: POST /token answered ${response.status}`);
  const token = (JSON.parse(response.body) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') throw new Error('rs-jwt: token response without access_token');
  return token;
}

/**
 * Issue 5 §6: local JWT validation by the resource-server library (src/resource-server/), per core. A
 * child process pinned to the servers' core validates one Gatehouse-issued token in a loop with the
 * library's ResourceServer (the JWKS fetched once from Gatehouse and cached), in rounds interleaved with
 * jose's `jwtVerify` alone on the same token (the peer): what the library adds on top of jose.
 */
export const rsJwtScenario: Scenario = {
  id: 'rs-jwt',
  title: 'resource-server library: JWT validation per core, next to jose jwtVerify',
  async run(context) {
    const token = await issueToken(context);
    const tokenFile = join(context.dataDir, 'rs-jwt-token');
    writeFileSync(tokenFile, token, { mode: 0o600 });
    const seconds = context.options.duration;
    let output: PeerOutput;
    try {
      output = await runNodeJson<PeerOutput>(context.serverCpus, [
        RS_JWT_PEER,
        '--issuer',
        context.gatehouse.url.replace('127.0.0.1', 'localhost'),
        '--jwks-uri',
        `${context.gatehouse.url}/jwks`,
        '--ca-file',
        join(context.dataDir, 'tls', 'cert.pem'),
        '--token-file',
        tokenFile,
        '--seconds',
        String(seconds),
      ]);
    } finally {
      rmSync(tokenFile, { force: true });
    }
    const { library, jose, nodeCrypto, cachedLibrary } = output;
    const ratio = library.perCpuSecond / jose.perCpuSecond;
    const where = context.serverCpus === undefined ? 'unpinned' : '1 core';
    return {
      rows: [
        {
          scenario: 'rs-jwt',
          label: `resource-server library, JWT validations/s (ES256, JWKS cached), ${where}`,
          result: asMeasured(library, seconds / 2),
          unbracketed: true,
          compare: `${Math.round(library.perCpuSecond).toLocaleString('en')}/CPU-s; ${ratio.toFixed(2)} x jose`,
        },
        {
          scenario: 'rs-jwt',
          label: `jose jwtVerify alone, same token and key (the peer), ${where}`,
          result: asMeasured(jose, seconds / 2),
          unbracketed: true,
          compare: `${Math.round(jose.perCpuSecond).toLocaleString('en')}/CPU-s; 1.00 x jose`,
        },
        {
          scenario: 'rs-jwt',
          label: `ES256 signature alone, sync node:crypto verify (reference floor), ${where}`,
          result: asMeasured(nodeCrypto, seconds / 5),
          unbracketed: true,
          compare: `${Math.round(nodeCrypto.perCpuSecond).toLocaleString('en')}/CPU-s; ${(nodeCrypto.perCpuSecond / jose.perCpuSecond).toFixed(2)} x jose`,
        },
        {
          scenario: 'rs-jwt',
          label: `resource-server library, the same token again (validated-token cache on), ${where}`,
          result: asMeasured(cachedLibrary, seconds / 5),
          unbracketed: true,
          compare: `${Math.round(cachedLibrary.perCpuSecond).toLocaleString('en')}/CPU-s; ${(cachedLibrary.perCpuSecond / jose.perCpuSecond).toFixed(2)} x jose`,
        },
      ],
      checks: [
        {
          name: 'rs-jwt: every validation succeeded',
          // The loop throws (and the child exits non-zero) on the first rejected token.
          pass: library.count > 0 && jose.count > 0,
          detail: `${library.count} library validations, ${jose.count} jose validations, none rejected`,
        },
      ],
      targets: [
        {
          name: 'resource-server JWT validation >= 10,000/s per core',
          target: '>= 10,000 validations per CPU-second',
          judge: () => ({
            measured:
              `${Math.round(library.perCpuSecond).toLocaleString('en')} per CPU-second ` +
              `(${Math.round(library.perSecond).toLocaleString('en')}/s on ${library.cpu.toFixed(2)} cores); ` +
              `jose alone ${Math.round(jose.perCpuSecond).toLocaleString('en')}: ${ratio.toFixed(2)} x jose`,
            pass: library.perCpuSecond >= MIN_PER_CPU_SECOND,
          }),
        },
      ],
      notes: [
        `rs-jwt: an in-process loop (bench/rs-jwt-peer.ts), ${output.concurrency} validations in flight, ` +
          'library and jose in interleaved rounds of equal length; per CPU-second counts every thread of the ' +
          "process (jose 6 verifies through WebCrypto, whose jobs run on libuv's pool). Not an HTTP load: no ratio to bare Fastify.",
      ],
    };
  },
};
