const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

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
  if (value.length > 2000) return { problem: 'is longer than 2000 characters' };
  if (value.includes('#')) return { problem: 'must not contain a fragment' };
  if (value.includes('\\')) return { problem: 'must not contain a backslash' };
  // Controls and spaces are silently removed or encoded by the URL parser: what was checked would
  // not be what was sent.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u0020\u007f]/.test(value))
    return { problem: 'must not contain spaces or control characters' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not an absolute URI' };
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') {
    const scheme = url.protocol.slice(0, -1);
    if (!new RegExp(`^${scheme}://`, 'i').test(value)) {
      return { problem: `must start with ${scheme}:// (an authority is required)` };
    }
    const authority = value.slice(scheme.length + 3).split(/[/?]/, 1)[0] ?? '';
    if (authority.includes('@')) return { problem: 'must not contain user information (user@)' };
    if (authority === '' || url.hostname === '') return { problem: 'has no host' };
    if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
      return { problem: 'must use https (http only on loopback hosts)' };
    }
    return { uri: url.href };
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
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  if (canonicalRedirectUri(requested).uri !== requested) return false;
  return registered.some((uri) => canonicalRedirectUri(uri).uri === requested);
}
