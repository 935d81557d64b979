import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { IncomingHttpHeaders } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { isNonPublicAddress } from '../shared/non-public-address.js';

/**
 * What a fetch of a document a client names may do (docs/decisions.md, decisions 21 and 46): a
 * `jwks_uri`, a Client ID Metadata Document.
 */
export interface PublicFetchPolicy {
  /**
   * Fetch from loopback, private, link-local, unique-local and other non-public addresses too. Off by
   * default: a client must not turn the server into a way into the network it sits in (server-side
   * request forgery).
   */
  allowPrivateAddresses: boolean;
  /** The whole fetch (connection, TLS, answer) must be done within this many milliseconds. */
  timeoutMs: number;
  /** An answer longer than this many bytes is refused. */
  maxBytes: number;
  /** Certificates (PEM) trusted beside the system's roots; tests give their own CA. */
  ca?: string;
}

/** The limits of decision 21: 5 s, 64 KiB, public addresses only. */
export const DEFAULT_PUBLIC_FETCH_POLICY: PublicFetchPolicy = {
  allowPrivateAddresses: false,
  timeoutMs: 5000,
  maxBytes: 64 * 1024,
};

/** A fetch refused or failed; the message says why, and holds nothing but the host and the reason. */
export class PublicFetchError extends Error {
  override name = 'PublicFetchError';
}

/** A JSON answer, and its headers (a Client ID Metadata Document's caching). */
export interface PublicJsonAnswer {
  body: unknown;
  headers: IncomingHttpHeaders;
}

/**
 * What a failed connection says, in words naming nothing but the reason: Node's own messages hold
 * addresses and ports (`connect ECONNREFUSED 10.0.0.5:443`), and the reason reaches the page of a
 * Client ID Metadata Document's authorization request (decision 46).
 */
function connectionFailure(error: Error): string {
  if (error instanceof PublicFetchError) return error.message;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was dropped';
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return 'the host cannot be reached';
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_|TLS|SSL/.test(code)) return 'its TLS certificate is not trusted';
  return 'the connection failed';
}

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
          // The address itself is not told: the reason reaches the client's page (decision 46).
          const reason = first === undefined ? 'has no address' : 'resolves to a non-public address';
          callback(
            Object.assign(new PublicFetchError(`${hostname} ${reason}`), { code: 'EJWKSADDRESS' }),
            '',
          );
          return;
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
    );
  };
}

/**
 * One GET over https of a JSON document on the public Internet, within the policy's time and size,
 * redirects not followed (a redirect could lead anywhere the address check did not look), and the
 * answer parsed as JSON. `fail` makes the error the caller's own kind.
 */
export function getPublicJson(
  uri: string,
  policy: PublicFetchPolicy,
  accept: string,
  makeError: (message: string) => Error = (message) => new PublicFetchError(message),
): Promise<PublicJsonAnswer> {
  const ca = policy.ca === undefined ? undefined : [...rootCertificates, policy.ca];
  return new Promise<PublicJsonAnswer>((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      reject(makeError('not a URL'));
      return;
    }
    if (url.protocol !== 'https:') {
      reject(makeError('only https URLs are fetched'));
      return;
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // An address in the URL itself is never looked up, so it is checked here.
    if (isIP(host) !== 0 && !policy.allowPrivateAddresses && isNonPublicAddress(host)) {
      reject(makeError(`${host} is not a public address`));
      return;
    }
    let settled = false;
    const finish = (error: Error | undefined, value?: PublicJsonAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolve(value as PublicJsonAnswer);
      else reject(makeError(error.message));
    };
    const options: RequestOptions = {
      host,
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { accept, 'user-agent': 'Gatehouse' },
      lookup: guardedLookup(policy.allowPrivateAddresses) as unknown as RequestOptions['lookup'],
      agent: false,
      ...(ca === undefined ? {} : { ca }),
      maxHeaderSize: 16 * 1024,
    };
    // Settles first, then drops the connection: whatever the socket reports after is ignored.
    const fail = (message: string) => {
      finish(new PublicFetchError(message));
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
      res.on('error', (error) => finish(new PublicFetchError(connectionFailure(error))));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        } catch {
          finish(new PublicFetchError('the answer is not JSON'));
          return;
        }
        finish(undefined, { body, headers: res.headers });
      });
    });
    const timer = setTimeout(() => fail(`no answer within ${policy.timeoutMs} ms`), policy.timeoutMs);
    req.on('error', (error) => finish(new PublicFetchError(connectionFailure(error))));
    req.end();
  });
}
