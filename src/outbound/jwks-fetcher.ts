import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import type { JwksFetcher } from '../core/ports.js';
import { isNonPublicAddress } from '../shared/non-public-address.js';

/** What a jwks_uri fetch may do (docs/decisions.md, decision 21). */
export interface JwksFetchPolicy {
  /**
   * Fetch from loopback, private, link-local, unique-local and other non-public addresses too
   * (GATEHOUSE_ALLOW_PRIVATE_JWKS_URI). Off by default: a client registration must not turn the
   * server into a way into the network it sits in (server-side request forgery).
   */
  allowPrivateAddresses: boolean;
  /** The whole fetch (connection, TLS, answer) must be done within this many milliseconds. */
  timeoutMs: number;
  /** An answer longer than this many bytes is refused. */
  maxBytes: number;
  /** Certificates (PEM) trusted beside the system's roots; tests give their own CA. */
  ca?: string;
}

export const DEFAULT_JWKS_FETCH_POLICY: JwksFetchPolicy = {
  allowPrivateAddresses: false,
  timeoutMs: 5000,
  maxBytes: 64 * 1024,
};

/** A fetch refused or failed; the message is for the log, never for the client. */
export class JwksFetchError extends Error {
  override name = 'JwksFetchError';
}

// Which addresses a fetch may not reach by default; pure, so core checks a literal address at
// registration with the same rule (docs/decisions.md, decision 21).
export { isNonPublicAddress };

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The connection's own DNS lookup: it resolves the name once, refuses when any address it gets is
 * not public, and hands the socket exactly those addresses. The check and the connection see the
 * same answer, so a name that resolves to a public address for a check and a private one for the
 * connection (DNS rebinding) gains nothing.
 */
function guardedLookup(allowPrivate: boolean) {
  return (
    hostname: string,
    options: { family?: number | string; all?: boolean; hints?: number },
    callback: LookupCallback,
  ) => {
    const family =
      options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    dnsLookup(
      hostname,
      { all: true, family: family === 4 || family === 6 ? family : 0, hints: options.hints },
      (error, addresses) => {
        if (error !== null) {
          callback(error, '');
          return;
        }
        const refused = allowPrivate
          ? undefined
          : addresses.find((entry) => isNonPublicAddress(entry.address));
        const first = addresses[0];
        if (refused !== undefined || first === undefined) {
          const reason =
            first === undefined ? 'has no address' : `resolves to the non-public address ${refused?.address}`;
          callback(Object.assign(new JwksFetchError(`${hostname} ${reason}`), { code: 'EJWKSADDRESS' }), '');
          return;
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
    );
  };
}

/**
 * The jwks_uri fetcher (core's JwksFetcher port): one GET over https, within the policy's time and
 * size, redirects not followed (a redirect could lead anywhere the address check did not look), and
 * the answer parsed as JSON. Core checks that it is a JWK Set of public keys and caches it.
 */
export function createJwksFetcher(policy: JwksFetchPolicy = DEFAULT_JWKS_FETCH_POLICY): JwksFetcher {
  const ca = policy.ca === undefined ? undefined : [...rootCertificates, policy.ca];
  return {
    fetch(uri: string): Promise<unknown> {
      return new Promise<unknown>((resolve, reject) => {
        let url: URL;
        try {
          url = new URL(uri);
        } catch {
          reject(new JwksFetchError('not a URL'));
          return;
        }
        if (url.protocol !== 'https:') {
          reject(new JwksFetchError('only https jwks_uri are fetched'));
          return;
        }
        const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
        // An address in the URL itself is never looked up, so it is checked here.
        if (isIP(host) !== 0 && !policy.allowPrivateAddresses && isNonPublicAddress(host)) {
          reject(new JwksFetchError(`${host} is not a public address`));
          return;
        }
        let settled = false;
        const finish = (error: Error | undefined, value?: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (error === undefined) resolve(value);
          else reject(error instanceof JwksFetchError ? error : new JwksFetchError(error.message));
        };
        const options: RequestOptions = {
          host,
          port: url.port === '' ? 443 : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { accept: 'application/jwk-set+json, application/json', 'user-agent': 'Gatehouse' },
          lookup: guardedLookup(policy.allowPrivateAddresses) as unknown as RequestOptions['lookup'],
          agent: false,
          ...(ca === undefined ? {} : { ca }),
          maxHeaderSize: 16 * 1024,
        };
        // Settles first, then drops the connection: whatever the socket reports after is ignored.
        const fail = (message: string) => {
          finish(new JwksFetchError(message));
          req.destroy();
        };
        const req = request(options, (res) => {
          if (res.statusCode !== 200) {
            fail(`answered ${res.statusCode ?? 'without a status'}`);
            return;
          }
          const declared = Number(res.headers['content-length']);
          if (Number.isFinite(declared) && declared > policy.maxBytes) {
            fail(`answer larger than ${policy.maxBytes} bytes`);
            return;
          }
          const chunks: Buffer[] = [];
          let length = 0;
          res.on('data', (chunk: Buffer) => {
            length += chunk.length;
            if (length > policy.maxBytes) {
              fail(`answer larger than ${policy.maxBytes} bytes`);
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', (error) => finish(error));
          res.on('end', () => {
            try {
              finish(undefined, JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
            } catch {
              finish(new JwksFetchError('the answer is not JSON'));
            }
          });
        });
        const timer = setTimeout(() => fail(`no answer within ${policy.timeoutMs} ms`), policy.timeoutMs);
        req.on('error', (error) => finish(error));
        req.end();
      });
    },
  };
}
