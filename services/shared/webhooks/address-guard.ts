import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * The SSRF guard of webhook deliveries: which addresses a webhook may never reach unless private
 * networks are allowed, checked on every address a name resolves to and on the connected peer.
 */

/** A destination the guard refused; the message names the address. */
export class BlockedDestinationError extends Error {
  readonly code = 'EBLOCKEDDESTINATION'
}

// Where a webhook must never reach unless TALLY_WEBHOOK_ALLOW_PRIVATE_NETWORKS is set: the IANA
// IPv4 and IPv6 special-purpose address registries, and every range that embeds an IPv4 address
// (NAT64, 6to4, Teredo, IPv4-compatible, IPv4-translated) since it may embed a private one.
const BLOCKED = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (and some clouds' metadata, e.g. 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['192.175.48.0', 24], // direct delegation AS112 service
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['64:ff9b::', 96], // NAT64 well-known prefix: reaches IPv4 space
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32, embeds IPv4) among them
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing SIDs
  ['fc00::', 7], // unique local (AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6')

/**
 * Why a destination's host is refused at creation when private networks are not allowed: a
 * literal private, loopback, link-local or metadata address, or localhost. Names are judged
 * again at every delivery, after DNS (guardedLookup).
 */
export function literalHostProblem(destination: string): string | undefined {
  const host = new URL(destination).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at localhost'
  if (isIP(host) && isBlockedAddress(host)) return 'must not point at a private, loopback or metadata address'
  return undefined
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged by the IPv4 address it maps to.
  const mapped = family === 6 ? mappedIPv4(address) : null
  if (mapped) return BLOCKED.check(mapped, 'ipv4')
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

function mappedIPv4(address: string): string | null {
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (dotted) return dotted[1] as string
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return null
  const hi = Number.parseInt(hex[1] as string, 16)
  const lo = Number.parseInt(hex[2] as string, 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

/** dns.lookup that fails when any address of the name is not public. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 4)
    const blocked = addresses.find((a) => isBlockedAddress(a.address))
    if (blocked || addresses.length === 0) {
      const error = new BlockedDestinationError(
        `${hostname} resolves to ${blocked?.address ?? 'nothing'}, which is not a public address`,
      )
      return callback(error as NodeJS.ErrnoException, '', 4)
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
    const first = addresses[0] as LookupAddress
    callback(null, first.address, first.family)
  })
}
