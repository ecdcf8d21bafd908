import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// A project admin chooses where a webhook or a Slack message goes. Without a rule, the server would
// post from inside the operator's network to its own services (a metadata endpoint, a database's
// HTTP port): every address that is not a public unicast one is refused unless the operator allows
// it (PROCTOR_NOTIFY_ALLOW_HOSTS), whatever spelling the URL uses.

/** A resolved address, as `dns.lookup` answers with `all: true`. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Answers every address of a host name; an error when it has none. Injected by tests. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 itself among it
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relays
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, the broadcast address among it
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the IPv4-compatible form
  ['64:ff9b:1::', 48], // local NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo among them
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local
  ['ff00::', 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** An IPv6 address as its eight 16-bit groups; null when it is not one. */
function groupsOf(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  // The dotted tail of ::ffff:1.2.3.4 as two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (::ffff:a.b.c.d), NAT64
 * (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::); null for any other.
 */
function embeddedIpv4(groups: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return ipv4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Of(g6, g7);
  if (g0 === 0x2002) return ipv4Of(g1, g2);
  return null;
}

/** Whether the address is a public unicast one, the only kind a receiver may have unless allowed. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 4) return !NOT_PUBLIC.check(bare, 'ipv4');
  const groups = groupsOf(bare);
  if (!groups) return false;
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== null) return !NOT_PUBLIC.check(ipv4, 'ipv4');
  return !NOT_PUBLIC.check(bare, 'ipv6');
}

/** What the operator allows beyond public addresses: host names, and networks in CIDR form. */
export interface AllowList {
  hosts: Set<string>;
  networks: BlockList;
}

export class AllowListError extends Error {}

/** `PROCTOR_NOTIFY_ALLOW_HOSTS`: comma-separated host names, addresses and CIDRs. */
export function parseAllowList(text: string): AllowList {
  const hosts = new Set<string>();
  const networks = new BlockList();
  for (const entry of text
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean)) {
    const [address = '', prefixText] = entry.replace(/^\[|\]$/g, '').split('/');
    const family = isIP(address);
    if (family === 0) {
      if (prefixText !== undefined || !/^[a-z0-9.-]+$/.test(entry)) throw new AllowListError(`"${entry}" is neither a host name nor an address or CIDR`);
      hosts.add(entry.replace(/\.$/, ''));
      continue;
    }
    const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new AllowListError(`"${entry}" has no valid prefix length`);
    networks.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return { hosts, networks };
}

/** Where receivers may be: the allow list, and the resolver that turns their names into addresses. */
export interface ReceiverPolicy {
  allow: AllowList;
  resolve: Resolver;
}

export function allowsAddress(allow: AllowList, address: string): boolean {
  if (isPublicAddress(address)) return true;
  const family = isIP(address);
  return family !== 0 && allow.networks.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a receiver was not reached, in Proctor's own words (never the receiver's). */
export class ReceiverRefusedError extends Error {
  constructor(
    message: string,
    /** Retrying cannot help (a forbidden address), as opposed to a name that did not resolve now. */
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export const FORBIDDEN_RECEIVER =
  'the receiver is or resolves to a loopback, private or otherwise non-public address, which the server does not post to (the operator may allow it: PROCTOR_NOTIFY_ALLOW_HOSTS)';

/** The URL's host without the brackets of an IPv6 literal, and without a final dot. */
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * The one address a request to the URL connects to: resolved once here, every address the name
 * has checked (a name that answers one allowed and one forbidden address is refused: it is how a
 * rebinding name looks), and the first then pinned for the connection.
 */
export async function receiverAddress(url: URL, policy: ReceiverPolicy): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const literal = isIP(host);
  if (literal !== 0) {
    if (!allowsAddress(policy.allow, host)) throw new ReceiverRefusedError(FORBIDDEN_RECEIVER, true);
    return { address: host, family: literal === 6 ? 6 : 4 };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) throw new ReceiverRefusedError("the receiver's host name did not resolve", false);
  if (!policy.allow.hosts.has(host) && addresses.some((entry) => !allowsAddress(policy.allow, entry.address))) {
    throw new ReceiverRefusedError(FORBIDDEN_RECEIVER, true);
  }
  return addresses[0] as ResolvedAddress;
}

/**
 * A receiver URL as a destination is saved: refused when its host is or resolves to a forbidden
 * address; a name that does not resolve now is accepted, and checked again at every delivery.
 */
export async function checkReceiverUrl(url: string, policy: ReceiverPolicy): Promise<string | null> {
  try {
    await receiverAddress(new URL(url), policy);
    return null;
  } catch (error) {
    if (error instanceof ReceiverRefusedError && error.permanent) return error.message;
    return null;
  }
}
