/**
 * GATEHOUSE_CLIENT_ID_METADATA_HOSTS (decision 46): which hosts' Client ID Metadata Documents are
 * fetched. `allow` empty: every host but the denied ones; else only the allowed ones, never a denied one.
 * A pattern is a host name (`app.example`) or every name below one (`*.example`, not `example` itself).
 */
export interface HostRule {
  allow: readonly string[];
  deny: readonly string[];
}

const PATTERN = /^(\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The rule a comma-separated list sets: `app.example, *.partner.example, !evil.partner.example`. Throws
 * an Error naming the entry that is not a host pattern.
 */
export function parseHostRule(text: string): HostRule {
  const allow: string[] = [];
  const deny: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const denied = entry.startsWith('!');
    const pattern = denied ? entry.slice(1).trim() : entry;
    if (!PATTERN.test(pattern)) {
      throw new Error(`"${raw.trim()}" is not a host name, *.name, or either after "!"`);
    }
    (denied ? deny : allow).push(pattern);
  }
  return { allow, deny };
}

function matches(pattern: string, host: string): boolean {
  return pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) : host === pattern;
}

/** Whether documents on `hostname` (a URL's, without port) may be fetched under `rule`. */
export function hostAllowed(rule: HostRule, hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (rule.deny.some((pattern) => matches(pattern, host))) return false;
  return rule.allow.length === 0 || rule.allow.some((pattern) => matches(pattern, host));
}
