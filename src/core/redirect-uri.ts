const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a URI may be registered as a redirect URI: absolute, no fragment (RFC 6749 §3.1.2),
 * https, or http on a loopback host, or a private-use scheme of a native app (RFC 8252 §7.1).
 */
export function redirectUriProblem(value: string): string | undefined {
  if (value.length > 2000) return 'is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URI';
  }
  if (value.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return url.hostname === '' ? 'has no host' : undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'must use https (http only on loopback hosts)';
  }
  if (/^(javascript|data|file|vbscript|blob|about):$/.test(url.protocol)) return 'uses a forbidden scheme';
  // Private-use schemes are reverse domain names (com.example.app:/callback).
  return url.protocol.slice(0, -1).includes('.') ? undefined : 'has an unsupported scheme';
}
