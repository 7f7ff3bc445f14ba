/**
 * Where the service may send a request on someone's behalf (a webhook delivery, a back-channel logout):
 * only to hosts on the public internet. A tenant that could name `169.254.169.254`, `10.0.0.1` or
 * `localhost` would have the service reach into the network it runs in, so such URLs are refused when
 * they are registered, and every address a name resolves to is checked again before each request.
 *
 * Pure: hosts arrive as Node's WHATWG URL parser leaves them (lower-case; every IPv4 notation such as
 * `2852039166`, `0x7f.1`, `127.1` or `017700000001` already turned into dotted decimal; IPv6 compressed and
 * bracketed) and addresses as the resolver answers them.
 */

export interface DestinationPolicy {
  /**
   * Whether loopback receivers (127.0.0.0/8, ::1, `localhost` and `*.localhost`) are allowed: only on the
   * local runtime, when its operator says so (WEBHOOK_ALLOW_LOOPBACK=1), for a receiver on their machine.
   */
  allowLoopback: boolean;
  /**
   * Origins trusted whatever their address: the local runtime's own reference application, which it
   * started itself on loopback. Never set on AWS.
   */
  trustedOrigins?: readonly string[];
  /** Where loopback is refused on the local runtime: how its operator allows it, for the refusal message. */
  loopbackHint?: string;
}

/** The policy on AWS, and everywhere nothing else is said: public internet hosts only. */
export const PUBLIC_DESTINATIONS: DestinationPolicy = { allowLoopback: false };

/** What an address is, when it is not a public internet address. */
type AddressClass =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (carrier-grade NAT)'
  | 'unique-local'
  | 'multicast'
  | 'broadcast'
  | 'unspecified'
  | 'reserved';

interface Range {
  /** The first address, as a number (IPv4) or a bigint (IPv6). */
  base: bigint;
  bits: number;
  kind: AddressClass;
}

const v4 = (text: string, bits: number, kind: AddressClass): Range => ({
  base: BigInt(parseIpv4(text) ?? Number.NaN),
  bits,
  kind,
});

/** IPv4 ranges that are not the public internet (RFC 6890's special-purpose registry, and multicast). */
const IPV4_RANGES: readonly Range[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared (carrier-grade NAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'reserved'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('198.51.100.0', 24, 'reserved'),
  v4('203.0.113.0', 24, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('255.255.255.255', 32, 'broadcast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const inRange = (value: bigint, width: number, range: Range): boolean =>
  value >> BigInt(width - range.bits) === range.base >> BigInt(width - range.bits);

/** An IPv4 address in dotted decimal (four parts, 0–255, no leading zeros), as a number; else undefined. */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part))) return undefined;
  const octets = parts.map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

/**
 * An IPv6 address in any textual form (`::`, leading zeros, a trailing dotted IPv4) as a 128-bit bigint;
 * undefined for anything else, a zone (`%eth0`) included.
 */
export function parseIpv6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const embedded = parseIpv4(text.slice(lastColon + 1));
    if (embedded === undefined) return undefined;
    tail = [Math.floor(embedded / 65_536), embedded % 65_536];
    head = `${text.slice(0, lastColon + 1)}`;
    // `::1.2.3.4` leaves `::`; `1::1.2.3.4` leaves `1::`; `1:2:3:4:5:6:1.2.3.4` leaves `1:2:3:4:5:6:`.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string | undefined): number[] | undefined => {
    if (part === undefined || part === '') return [];
    const groups = part.split(':');
    if (!groups.every((group) => /^[0-9a-fA-F]{1,4}$/.test(group))) return undefined;
    return groups.map((group) => Number.parseInt(group, 16));
  };
  const first = groupsOf(halves[0]);
  const second = groupsOf(halves[1]);
  if (!first || !second) return undefined;
  const given = first.length + second.length + tail.length;
  let groups: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    groups = [...first, ...Array<number>(8 - given).fill(0), ...second, ...tail];
  } else {
    if (given !== 8) return undefined;
    groups = [...first, ...tail];
  }
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/** IPv6 prefixes, as `[first address, prefix length]`. */
const v6 = (text: string, bits: number): [bigint, number] => [parseIpv6(text) ?? -1n, bits];
const inPrefix = (value: bigint, [base, bits]: [bigint, number]): boolean =>
  value >> BigInt(128 - bits) === base >> BigInt(128 - bits);

const GLOBAL_UNICAST = v6('2000::', 3);
const IPV4_MAPPED = v6('::ffff:0:0', 96);
/** `::ffff:0:a.b.c.d` (RFC 2765's IPv4-translated form). */
const IPV4_TRANSLATED = v6('::ffff:0:0:0', 96);
const IPV4_COMPATIBLE = v6('::', 96);
const NAT64 = v6('64:ff9b::', 96);
const LOCAL_NAT64 = v6('64:ff9b:1::', 48);
const SIX_TO_FOUR = v6('2002::', 16);
const IPV6_RANGES: ReadonlyArray<[[bigint, number], AddressClass]> = [
  [v6('fc00::', 7), 'unique-local'],
  [v6('fe80::', 10), 'link-local'],
  [v6('fec0::', 10), 'reserved'],
  [v6('ff00::', 8), 'multicast'],
  [v6('100::', 64), 'reserved'],
  [v6('2001:db8::', 32), 'reserved'],
  // IETF protocol assignments: Teredo (2001::/32, which hides an IPv4 address), benchmarking, ORCHID.
  [v6('2001::', 23), 'reserved'],
];

const low32 = (value: bigint): number => Number(value & 0xffff_ffffn);

/** The class of an IPv4 address (as a number), or undefined when it is a public internet address. */
function ipv4Class(value: number): AddressClass | undefined {
  return IPV4_RANGES.find((range) => inRange(BigInt(value), 32, range))?.kind;
}

function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

/**
 * Why an address (dotted IPv4, or IPv6 without brackets) may not be sent to under `policy`, as a phrase
 * ("a loopback address"); undefined when it may. IPv4 inside IPv6 (mapped, translated, compatible, NAT64,
 * 6to4) is judged by the IPv4 address it carries.
 */
export function addressRefusal(address: string, policy: DestinationPolicy): string | undefined {
  const ipv4 = parseIpv4(address);
  if (ipv4 !== undefined) {
    const kind = ipv4Class(ipv4);
    if (kind === undefined || (kind === 'loopback' && policy.allowLoopback)) return undefined;
    return `${article(kind)} ${kind} address`;
  }
  const ipv6 = parseIpv6(address);
  if (ipv6 === undefined) return 'not an IP address';
  if (ipv6 === 0n) return 'the unspecified address';
  if (ipv6 === 1n) return policy.allowLoopback ? undefined : 'a loopback address';
  const carried = (form: string, embedded: number): string | undefined => {
    const kind = ipv4Class(embedded);
    return kind === undefined
      ? undefined
      : `${form} of ${formatIpv4(embedded)}, ${article(kind)} ${kind} address`;
  };
  if (inPrefix(ipv6, IPV4_MAPPED)) return carried('an IPv4-mapped address', low32(ipv6));
  if (inPrefix(ipv6, IPV4_TRANSLATED)) return carried('an IPv4-translated address', low32(ipv6));
  // Deprecated since 2006 and routed nowhere: whatever IPv4 address it carries, it is no destination.
  if (inPrefix(ipv6, IPV4_COMPATIBLE)) {
    return carried('an IPv4-compatible address', low32(ipv6)) ?? 'an IPv4-compatible address (deprecated)';
  }
  if (inPrefix(ipv6, NAT64)) return carried('a NAT64 address', low32(ipv6));
  if (inPrefix(ipv6, LOCAL_NAT64)) return 'a local-use NAT64 address';
  if (inPrefix(ipv6, SIX_TO_FOUR)) {
    return carried('a 6to4 address', Number((ipv6 >> 80n) & 0xffff_ffffn));
  }
  const special = IPV6_RANGES.find(([prefix]) => inPrefix(ipv6, prefix))?.[1];
  if (special) return `${article(special)} ${special} address`;
  return inPrefix(ipv6, GLOBAL_UNICAST) ? undefined : 'a reserved address';
}

/** "an unspecified", "a unique-local": by the sound, not the letter. */
function article(kind: AddressClass): string {
  return /^([aeio]|un[^i])/.test(kind) ? 'an' : 'a';
}

/**
 * Top-level names that resolve only inside some network, never on the public internet: mDNS's `local`,
 * the private-use `internal` (reserved by ICANN in 2024) and `home.arpa` (RFC 8375), `arpa` itself, and
 * the names private networks commonly use though no public zone delegates them.
 */
const INTERNAL_SUFFIXES = [
  'local',
  'internal',
  'arpa',
  'localdomain',
  'lan',
  'intranet',
  'corp',
  'home',
  'private',
];

/** True for `localhost` and `*.localhost` (RFC 6761: always loopback), trailing dots aside. */
function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A URL's hostname without IPv6 brackets, and without the one trailing dot a fully qualified name may carry. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname.replace(/\.$/, '');
}

/** True when a URL's hostname is a loopback host: `localhost`, `*.localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname.toLowerCase());
  if (isLocalhostName(host)) return true;
  const ipv4 = parseIpv4(host);
  if (ipv4 !== undefined) return ipv4Class(ipv4) === 'loopback';
  return parseIpv6(host) === 1n;
}

/**
 * Why a URL's hostname (as `new URL` leaves it) may not be sent to under `policy`, as a sentence naming it;
 * undefined when it may (a name is only judged by what it could resolve to later, at each request).
 */
export function hostRefusal(hostname: string, policy: DestinationPolicy): string | undefined {
  const host = bareHost(hostname.toLowerCase());
  if (hostname.startsWith('[') || parseIpv4(host) !== undefined) {
    const refusal = addressRefusal(host, policy);
    return refusal && `${hostname} is ${refusal}`;
  }
  if (host === '' || host.split('.').some((label) => label === ''))
    return `${hostname} is not a valid host name`;
  if (isLocalhostName(host)) {
    return policy.allowLoopback ? undefined : `${hostname} is a loopback name`;
  }
  if (!host.includes('.')) return `${hostname} is a single-label name, which resolves only inside a network`;
  const suffix = INTERNAL_SUFFIXES.find((tld) => host === tld || host.endsWith(`.${tld}`));
  if (suffix !== undefined) return `${hostname} is under .${suffix}, which resolves only inside a network`;
  return undefined;
}

/** Why `url` may not be sent to under `policy` (its host, unless its origin is trusted); undefined when it may. */
export function destinationRefusal(url: URL, policy: DestinationPolicy): string | undefined {
  if (policy.trustedOrigins?.includes(url.origin)) return undefined;
  return hostRefusal(url.hostname, policy);
}

/** Whether `url`'s origin is one the policy trusts whatever its address. */
export function isTrustedOrigin(url: URL, policy: DestinationPolicy): boolean {
  return policy.trustedOrigins?.includes(url.origin) ?? false;
}

/**
 * How many webhook deliveries the service sends to one host name in one second, whoever's endpoints
 * they are: the bound that keeps it from being a signed-POST reflector at volume against a third party
 * (every key may register 16 endpoints, and there is no limit to keys). A delivery over it waits and is
 * sent later, never dropped (docs/webhooks.md).
 */
export const WEBHOOK_DELIVERIES_PER_HOST_PER_SECOND = 50;

/**
 * How many of a host's deliveries in one second one owner may take: a fifth of the host's bound. The
 * host's bound alone would let one owner flooding a host many tenants use (an integration platform)
 * take every second's places there, and every other owner's deliveries to it would wait behind the flood
 * for as long as it lasts. With a share, an owner over it waits for its own later seconds before it is
 * counted against the host at all, so it holds at most 10 of the host's 50 places a second: four other
 * owners flooding the same host at once still leave places for everyone else. 10 a second is 36,000 an
 * hour to one host, far beyond what one tenant's receivers on one platform take in normal use.
 */
export const WEBHOOK_DELIVERIES_PER_OWNER_PER_HOST_PER_SECOND = 10;

/**
 * The host a delivery is counted against: the URL's host name as the URL parser writes it (lower case,
 * IPv4 in dotted form, IPv6 in brackets), without its port: one machine on two ports is one host.
 */
export function rateLimitedHostOf(url: string): string {
  return new URL(url).hostname;
}

/**
 * Seconds a delivery waits when it was the `count`th to ask in its second and `limit` go a second: none
 * within the limit; else enough whole seconds that the ones before it over the limit go first.
 */
export function rateLimitWaitSeconds(count: number, limit: number): number {
  return count <= limit ? 0 : Math.ceil((count - limit) / limit);
}

/** The per-second counts a fair-share admission reads, each counting one more delivery as it answers. */
export interface FairShareCounters {
  /** Counts the delivery in its owner's window on the host; answers the window's count. */
  owner(): Promise<number>;
  /** Counts the delivery in the host's window, shared by every owner; answers the window's count. */
  host(): Promise<number>;
}

/**
 * Seconds a delivery waits under a host's bound shared fairly between owners: first counted in its
 * owner's share of the host (`perOwner` a second); over the share it waits for a later second of its own
 * and is not counted against the host, so an owner's flood never takes another owner's places. Within
 * the share it is counted against the host (`perHost` a second, every owner together), the bound that
 * holds whatever the owners.
 */
export async function fairShareWaitSeconds(
  counters: FairShareCounters,
  limits: { perHost: number; perOwner: number },
): Promise<number> {
  const ownerWait = rateLimitWaitSeconds(await counters.owner(), limits.perOwner);
  if (ownerWait > 0) return ownerWait;
  return rateLimitWaitSeconds(await counters.host(), limits.perHost);
}
