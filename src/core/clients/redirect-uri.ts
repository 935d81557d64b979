// The URI syntax shared with the resource-server library (docs/decisions.md, decision 26).
import { httpUriProblem, parseStoredUri } from 'gatehouse-oauth-resource-server/uri-syntax';

export type CanonicalRedirectUri =
  { uri: string; problem?: undefined } | { uri?: undefined; problem: string };

/**
 * The canonical form of a URI that may be registered as a redirect URI (the WHATWG URL serialisation,
 * which is what a browser navigates to), or why it may not be: absolute, no fragment (RFC 6749
 * §3.1.2), https, or http on a loopback host, or a private-use scheme of a native app (RFC 8252 §7.1).
 *
 * Storing and comparing the parsed form closes the gap between what is checked and where a browser
 * goes: `https://evil.example\@good.example/cb` reads as good.example to a string check, but a browser
 * turns the backslash into a slash and goes to evil.example. So backslashes and userinfo (RFC 3986
 * §3.2.1; RFC 9700 §4.1.1 warns of exactly this confusion) are refused, as is an http(s) URI without
 * the `//` authority (`https:evil.example/cb`, which a browser silently completes).
 */
export function canonicalRedirectUri(value: string): CanonicalRedirectUri {
  const { url, problem } = parseStoredUri(value);
  if (url === undefined) return { problem };
  if (url.protocol === 'https:' || url.protocol === 'http:') {
    const httpProblem = httpUriProblem(value, url);
    return httpProblem === undefined ? { uri: url.href } : { problem: httpProblem };
  }
  if (/^(javascript|data|file|vbscript|blob|about):$/.test(url.protocol)) {
    return { problem: 'uses a forbidden scheme' };
  }
  if (url.username !== '' || url.password !== '') {
    return { problem: 'must not contain user information (user@)' };
  }
  // Private-use schemes are reverse domain names (com.example.app:/callback).
  return url.protocol.slice(0, -1).includes('.')
    ? { uri: url.href }
    : { problem: 'has an unsupported scheme' };
}

/**
 * Whether `requested` is one of the client's redirect URIs: an exact string match (RFC 6749
 * §3.1.2.3, RFC 9700 §4.1.3) of canonical forms. The request must itself be in canonical form, so the
 * address the browser is sent to is exactly the one checked; a registration made before URIs were
 * canonicalised matches only through its canonical form.
 */
export function isRegisteredRedirectUri(
  registered: readonly string[],
  requested: string,
  options: { anyLoopbackPort?: boolean } = {},
): boolean {
  if (canonicalRedirectUri(requested).uri !== requested) return false;
  const portless = options.anyLoopbackPort === true ? withoutLoopbackPort(requested) : undefined;
  return registered.some((uri) => {
    const canonical = canonicalRedirectUri(uri).uri;
    if (canonical === requested) return true;
    return portless !== undefined && canonical !== undefined && withoutLoopbackPort(canonical) === portless;
  });
}

/**
 * RFC 8252 §7.3: a native app's loopback redirect (`http://127.0.0.1` or `http://[::1]`, never the name
 * `localhost`, §8.3) gets its port from the system at the time of the request, so the port is not
 * compared. The URI without its port, or undefined when it is not such a redirect.
 */
function withoutLoopbackPort(uri: string): string | undefined {
  const url = new URL(uri);
  if (url.protocol !== 'http:' || (url.hostname !== '127.0.0.1' && url.hostname !== '[::1]')) {
    return undefined;
  }
  url.port = '';
  return url.href;
}
