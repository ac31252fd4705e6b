/**
 * SSRF guard (docs/webhooks.md): webhook URLs are chosen by users, so without a guard Sluice could be
 * made to POST into its own network (a database admin port, a cloud metadata service handing out
 * credentials). Destinations whose address is loopback, private, link-local, CGNAT, multicast, cloud
 * metadata or otherwise not a public unicast address are refused, unless the operator sets
 * SLUICE_ALLOW_PRIVATE_DESTINATIONS=true (local development). A refusal is final: it is not retried.
 *
 * The check applies to the address actually dialled: `createGuardedLookup` resolves a host name once,
 * checks every address it got, and hands exactly those addresses to the socket. There is no second
 * resolution a DNS-rebinding server could answer differently. IP-literal hosts never reach a lookup,
 * so the connector checks them with `refusalForHost`. URL parsing has already normalized spellings
 * such as `http://2130706433/`, `http://0x7f.1/` or `http://0177.0.0.1/` to `127.0.0.1`.
 *
 * IPv6 addresses that embed an IPv4 address (IPv4-mapped `::ffff:127.0.0.1`, IPv4-compatible, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`) are judged by the IPv4 address inside.
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP, isIPv4, type LookupFunction } from 'node:net'

/** Setting that turns the guard off; named in every refusal so the fix is one search away. */
export const ALLOW_PRIVATE_SETTING = 'SLUICE_ALLOW_PRIVATE_DESTINATIONS'

/** Raised when a destination's address is not allowed. A final (not retried) failure. */
export class SsrfRefusedError extends Error {
  readonly code = 'ERR_SLUICE_SSRF'
  readonly hostname: string
  readonly address: string
  readonly range: string

  constructor(hostname: string, address: string, range: string) {
    const where = hostname === address ? address : `${hostname} (${address})`
    super(
      `Refused to connect to ${where}: ${range} addresses are not allowed as webhook destinations. ` +
        `Set ${ALLOW_PRIVATE_SETTING}=true to allow them (local development only).`,
    )
    this.name = 'SsrfRefusedError'
    this.hostname = hostname
    this.address = address
    this.range = range
  }
}

interface Range {
  /** The network address (an IPv4 address as its 32-bit value). */
  network: bigint
  prefix: number
  name: string
  /** For IPv6 ranges that carry an IPv4 address: where it sits. */
  embedded?: (address: bigint) => number[]
}

/** First match wins, so specific entries (metadata, broadcast) come before the ranges holding them. */
const IPV4_RANGES: readonly Range[] = [
  v4('169.254.169.254/32', 'cloud metadata'), // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
  v4('100.100.100.200/32', 'cloud metadata'), // Alibaba Cloud
  v4('168.63.129.16/32', 'cloud metadata'), // Azure WireServer
  v4('0.0.0.0/8', 'unspecified ("this network")'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared (CGNAT)'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignment'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
]

const low32 = (address: bigint) => [Number(address & 0xffff_ffffn)]

const IPV6_RANGES: readonly Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::ffff:0:0/96', 'IPv4-mapped', low32),
  v6('::/96', 'IPv4-compatible', low32),
  v6('64:ff9b::/96', 'NAT64', low32),
  v6('64:ff9b:1::/48', 'private (local-use NAT64)'),
  v6('100::/64', 'discard-only'),
  // Teredo hides the client's IPv4 address inverted in the last 32 bits; the server's is in bits 32-63.
  v6('2001::/32', 'Teredo', (a) => [Number((a >> 64n) & 0xffff_ffffn), Number(~a & 0xffff_ffffn)]),
  v6('2001:db8::/32', 'documentation'),
  v6('2002::/16', '6to4', (a) => [Number((a >> 80n) & 0xffff_ffffn)]),
  v6('fd00:ec2::254/128', 'cloud metadata'), // AWS over IPv6
  v6('fc00::/7', 'private (unique local)'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local (deprecated)'),
  v6('ff00::/8', 'multicast'),
]

/**
 * The name of the blocked range holding `address` (e.g. `loopback`, `IPv4-mapped loopback 127.0.0.1`),
 * or undefined when it is a public address a webhook may go to. Anything not an IP is refused.
 */
export function blockedRange(address: string): string | undefined {
  const bare = stripBrackets(address)
  const family = isIP(bare)
  if (family === 4) return match(IPV4_RANGES, 32, BigInt(ipv4ToNumber(bare)))
  if (family === 6) {
    const value = ipv6ToBigInt(bare)
    for (const range of IPV6_RANGES) {
      if (!inRange(value, range, 128)) continue
      if (!range.embedded) return range.name
      // An embedded IPv4 address is refused for what it is; a public one passes.
      for (const inner of range.embedded(value)) {
        const innerRange = match(IPV4_RANGES, 32, BigInt(inner))
        if (innerRange) return `${range.name} ${innerRange} ${numberToIpv4(inner)}`
      }
      return undefined
    }
    return undefined
  }
  return 'not an IP address'
}

/** The refusal for connecting to `address` (resolved from `hostname`), or undefined when allowed. */
export function refusalFor(hostname: string, address: string): SsrfRefusedError | undefined {
  const range = blockedRange(address)
  return range === undefined ? undefined : new SsrfRefusedError(hostname, address, range)
}

/**
 * For a host that is an IP literal (`127.0.0.1`, `[::1]`): its refusal, if any. Host names return
 * undefined here; `createGuardedLookup` checks what they resolve to.
 */
export function refusalForHost(host: string): SsrfRefusedError | undefined {
  const bare = stripBrackets(host)
  return isIP(bare) === 0 ? undefined : refusalFor(bare, bare)
}

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to all its addresses. The default uses the system resolver (`dns.lookup`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export const systemResolver: Resolver = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, order: 'verbatim' })
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

/**
 * A `lookup` for `net.connect` / undici's `connect: { lookup }`: resolves once, refuses the host if
 * ANY of its addresses is blocked (a name mixing public and private addresses is an attack, not a
 * configuration), and returns exactly the checked addresses, so the socket dials what was checked.
 * With `allowPrivate` it still resolves once but checks nothing.
 */
export function createGuardedLookup(
  options: { allowPrivate?: boolean; resolve?: Resolver } = {},
): LookupFunction {
  const { allowPrivate = false, resolve = systemResolver } = options
  return (hostname, lookupOptions, callback) => {
    guardedResolve(hostname, allowPrivate, resolve).then(
      (checked) => {
        const wanted = familyNumber(lookupOptions.family)
        const usable = wanted === 0 ? checked : checked.filter((entry) => entry.family === wanted)
        const first = usable[0]
        if (first === undefined) {
          callback(notFound(hostname), '', 0)
        } else if (lookupOptions.all) {
          callback(null, usable)
        } else {
          callback(null, first.address, first.family)
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    )
  }
}

/** Resolves `hostname` once (an IP literal resolves to itself) and checks every address. */
export async function guardedResolve(
  hostname: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<ResolvedAddress[]> {
  const bare = stripBrackets(hostname)
  const literal = isIP(bare)
  const addresses: ResolvedAddress[] =
    literal !== 0 ? [{ address: bare, family: literal === 6 ? 6 : 4 }] : await resolve(bare)
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const refusal = refusalFor(bare, address)
      if (refusal) throw refusal
    }
  }
  return addresses
}

/** net passes 0, 4, 6, or (newer Node) 'IPv4' / 'IPv6'. */
function familyNumber(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4
  if (family === 6 || family === 'IPv6') return 6
  return 0
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname })
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

function match(ranges: readonly Range[], bits: number, value: bigint): string | undefined {
  return ranges.find((range) => inRange(value, range, bits))?.name
}

function inRange(value: bigint, range: Range, bits: number): boolean {
  const shift = BigInt(bits - range.prefix)
  return value >> shift === range.network >> shift
}

function v4(cidr: string, name: string): Range {
  const [address = '', prefix = ''] = cidr.split('/')
  return { network: BigInt(ipv4ToNumber(address)), prefix: Number(prefix), name }
}

function v6(cidr: string, name: string, embedded?: (address: bigint) => number[]): Range {
  const [address = '', prefix = ''] = cidr.split('/')
  return { network: ipv6ToBigInt(address), prefix: Number(prefix), name, ...(embedded ? { embedded } : {}) }
}

/** Dotted-quad to a 32-bit unsigned number. Only called with strings `isIPv4` accepted. */
function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0)
}

function numberToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.')
}

/** IPv6 text (any valid spelling: `::`, embedded dotted quad, zone id) to a 128-bit bigint. */
function ipv6ToBigInt(address: string): bigint {
  const withoutZone = address.split('%')[0] ?? ''
  const [head = '', tail] = withoutZone.split('::')
  const groups = (text: string): number[] =>
    text === ''
      ? []
      : text.split(':').flatMap((part) => {
          if (!isIPv4(part)) return [Number.parseInt(part, 16)]
          const value = ipv4ToNumber(part)
          return [Math.floor(value / 0x10000), value % 0x10000]
        })
  const headGroups = groups(head)
  const tailGroups = tail === undefined ? [] : groups(tail)
  const zeros = new Array<number>(8 - headGroups.length - tailGroups.length).fill(0)
  return [...headGroups, ...zeros, ...tailGroups].reduce((value, group) => (value << 16n) | BigInt(group), 0n)
}
