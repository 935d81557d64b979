import { BlockList, isIP } from 'node:net';

/**
 * Addresses that are not the public Internet: RFC 6890's special-purpose registries (this network,
 * RFC 1918 private, RFC 6598 shared, loopback, RFC 3927 link-local, IETF protocol assignments,
 * documentation, benchmarking, multicast, reserved) and their IPv6 counterparts (unspecified, loopback,
 * RFC 4193 unique-local, link-local, site-local, multicast, documentation, discard-only, Teredo).
 * BlockList also matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 rules.
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (net.isIP said so), a trailing dotted quad included. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? front
      : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return groups.map((group) => parseInt(group, 16));
}

/** The IPv4 address inside a NAT64 (RFC 6052, 64:ff9b::/96) or 6to4 (RFC 3056, 2002::/16) address. */
function embeddedIpv4(groups: number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const quad = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return quad(g6, g7);
  if (g0 === 0x2002) return quad(g1, g2);
  return undefined;
}

/** Whether `address` (an IP address) is one a jwks_uri fetch may not reach by default. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  const plain = address.split('%')[0] as string;
  if (NOT_PUBLIC.check(plain, 'ipv6')) return true;
  const inner = embeddedIpv4(ipv6Groups(plain));
  return inner !== undefined && NOT_PUBLIC.check(inner, 'ipv4');
}

/**
 * Whether a URL's host is, without any DNS lookup, not the public Internet: a literal non-public
 * address (isNonPublicAddress), or a name that is loopback by definition (`localhost` and its
 * subdomains, RFC 6761 §6.3). A name that merely resolves to such an address is not caught here: only
 * the fetch, which resolves it, can see that (docs/decisions.md, decision 21).
 */
export function isLiteralNonPublicHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (isIP(host) !== 0) return isNonPublicAddress(host);
  return host === 'localhost' || host.endsWith('.localhost');
}
