import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpsRequest } from '../lib/https.js';
import { RS_JWT_PEER, runNodeJson } from '../lib/processes.js';
import { clientCredentialsRequest } from '../lib/token-requests.js';
import type { BenchContext, Measured, Scenario } from '../lib/types.js';

/** Target: resource-server JWT validation in the library at >= 10,000/s per core. */
const MIN_PER_CPU_SECOND = 10_000;
/** Issue 17: the library at >= 0.95 x the bare signature check, per CPU-second (ES256 and RS256). */
const MIN_SHARE_OF_FLOOR = 0.95;
const FLOOR_JUDGED: readonly Algorithm[] = ['ES256', 'RS256'];

interface PathResult {
  perSecond: number;
  /** Cores used while it ran (1.00 = one core busy). */
  cpu: number;
  perCpuSecond: number;
  count: number;
  /** Wall seconds measured, over every round. */
  seconds: number;
}

type Algorithm = 'ES256' | 'RS256' | 'EdDSA';
const ALGORITHMS: readonly Algorithm[] = ['ES256', 'RS256', 'EdDSA'];

interface AlgorithmResult {
  /** The library, validated-token cache off: what is judged (ES256). */
  library: PathResult;
  jose: PathResult;
  /** The signature check alone with synchronous node:crypto: the floor, for reference. */
  nodeCrypto: PathResult;
  /** The same check on parts taken from the token each time, its claims parsed: the decoded floor. */
  decoded: PathResult;
}

interface PeerOutput {
  algorithms: Record<Algorithm, AlgorithmResult>;
  /** The library with its validated-token cache, the same ES256 token again: not what is judged. */
  cachedLibrary: PathResult;
  concurrency: number;
}

/** A row for an in-process loop: no latency, no driver; CPU per request is CPU per validation. */
function asMeasured(result: PathResult): Measured {
  const seconds = result.seconds;
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

const perCpu = (result: PathResult) => `${Math.round(result.perCpuSecond).toLocaleString('en')}/CPU-s`;

/**
 * Target: local JWT validation by the resource-server library (packages/resource-server/), per core. A
 * child process pinned to the servers' core validates one token per algorithm in a loop with the
 * library's ResourceServer, in rounds interleaved with jose's `jwtVerify` alone on the same token (the
 * peer) and the bare node:crypto signature check (the floor). ES256 is a Gatehouse-issued token (the JWKS
 * fetched from Gatehouse); RS256 and EdDSA carry the same claims signed by Gatehouse's KeyRing in the
 * child with a key of that algorithm.
 */
export const rsJwtScenario: Scenario = {
  id: 'rs-jwt',
  title: 'resource-server library: JWT validation per core (ES256, RS256, EdDSA), next to jose jwtVerify',
  async run(context) {
    const token = await issueToken(context);
    const tokenFile = join(context.dataDir, 'rs-jwt-token');
    writeFileSync(tokenFile, token, { mode: 0o600 });
    // Three algorithms share the run: twice the usual duration, so each path still gets seconds.
    const seconds = context.options.duration * 2;
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
    const where = context.serverCpus === undefined ? 'unpinned' : '1 core';
    const rows = ALGORITHMS.flatMap((alg) => {
      const { library, jose, nodeCrypto, decoded } = output.algorithms[alg];
      const versusJose = (result: PathResult) =>
        `${perCpu(result)}; ${(result.perCpuSecond / jose.perCpuSecond).toFixed(2)} x jose`;
      return [
        {
          scenario: 'rs-jwt',
          label: `resource-server library, JWT validations/s (${alg}, JWKS cached, token cache off), ${where}`,
          result: asMeasured(library),
          unbracketed: true,
          compare: versusJose(library),
        },
        {
          scenario: 'rs-jwt',
          label: `jose jwtVerify alone, same ${alg} token and key (the peer), ${where}`,
          result: asMeasured(jose),
          unbracketed: true,
          compare: versusJose(jose),
        },
        {
          scenario: 'rs-jwt',
          label: `${alg} signature alone, sync node:crypto verify (reference floor), ${where}`,
          result: asMeasured(nodeCrypto),
          unbracketed: true,
          compare: versusJose(nodeCrypto),
        },
        {
          scenario: 'rs-jwt',
          label: `${alg} token decoded and its signature checked, claims parsed, nothing else (decoded floor), ${where}`,
          result: asMeasured(decoded),
          unbracketed: true,
          compare: `${versusJose(decoded)}; ${(decoded.perCpuSecond / nodeCrypto.perCpuSecond).toFixed(2)} x floor`,
        },
      ];
    });
    const es256 = output.algorithms.ES256;
    const { cachedLibrary } = output;
    rows.push({
      scenario: 'rs-jwt',
      label: `resource-server library, the same ES256 token again (validated-token cache on), ${where}`,
      result: asMeasured(cachedLibrary),
      unbracketed: true,
      compare: `${perCpu(cachedLibrary)}; ${(cachedLibrary.perCpuSecond / es256.jose.perCpuSecond).toFixed(2)} x jose`,
    });
    const ratio = es256.library.perCpuSecond / es256.jose.perCpuSecond;
    const floorShare = es256.library.perCpuSecond / es256.nodeCrypto.perCpuSecond;
    return {
      rows,
      checks: [
        {
          name: 'rs-jwt: every validation succeeded',
          // The loop throws (and the child exits non-zero) on the first rejected token.
          pass: ALGORITHMS.every((alg) => output.algorithms[alg].library.count > 0),
          detail:
            ALGORITHMS.map((alg) => {
              const { library, jose } = output.algorithms[alg];
              return `${alg}: ${library.count} library, ${jose.count} jose`;
            }).join('; ') + '; none rejected',
        },
      ],
      targets: [
        {
          name: 'resource-server JWT validation >= 10,000/s per core',
          target: '>= 10,000 validations per CPU-second (ES256, the default)',
          judge: () => ({
            measured:
              `${Math.round(es256.library.perCpuSecond).toLocaleString('en')} per CPU-second ` +
              `(${Math.round(es256.library.perSecond).toLocaleString('en')}/s on ${es256.library.cpu.toFixed(2)} cores); ` +
              `jose alone ${Math.round(es256.jose.perCpuSecond).toLocaleString('en')}: ${ratio.toFixed(2)} x jose; ` +
              `${(floorShare * 100).toFixed(0)}% of the bare signature check`,
            pass: es256.library.perCpuSecond >= MIN_PER_CPU_SECOND,
          }),
        },
        ...FLOOR_JUDGED.map((alg) => ({
          name: `resource-server JWT validation >= 0.95 x the bare signature check (${alg})`,
          target: `>= 0.95 x sync node:crypto verify of the same ${alg} token, per CPU-second`,
          judge: () => {
            const { library, nodeCrypto } = output.algorithms[alg];
            const share = library.perCpuSecond / nodeCrypto.perCpuSecond;
            return {
              measured:
                `${perCpu(library)} vs floor ${perCpu(nodeCrypto)}: ${share.toFixed(2)} x floor ` +
                `(${(share * 100).toFixed(0)}%)`,
              pass: share >= MIN_SHARE_OF_FLOOR,
            };
          },
        })),
        ...FLOOR_JUDGED.map((alg) => ({
          name: `resource-server JWT validation next to the decoded floor (${alg})`,
          target: 'reported (no threshold): what the library adds to the least any validator does per token',
          judge: () => {
            const { library, nodeCrypto, decoded } = output.algorithms[alg];
            return {
              measured:
                `library ${(library.perCpuSecond / decoded.perCpuSecond).toFixed(2)} x the decoded floor ` +
                `(${perCpu(library)} vs ${perCpu(decoded)}); the decoded floor itself ` +
                `${(decoded.perCpuSecond / nodeCrypto.perCpuSecond).toFixed(2)} x the bare check`,
              pass: true,
              reported: true,
            };
          },
        })),
      ],
      notes: [
        `rs-jwt: an in-process loop (bench/rs-jwt-peer.ts), ${output.concurrency} validations in flight, ` +
          'library, jose and the bare signature check in interleaved rounds; per CPU-second counts every thread of the ' +
          "process (jose 6 verifies through WebCrypto, whose jobs run on libuv's pool). ES256: a Gatehouse-issued " +
          "token; RS256 and EdDSA: its claims signed by Gatehouse's KeyRing in the child with a key of that " +
          'algorithm, the JWKS given to the library in-process. Not an HTTP load: no ratio to bare Fastify.',
      ],
    };
  },
};
