/**
 * Which IP addresses a webhook may not reach: every range that is not the public Internet
 * (private, loopback, link-local, unique-local, shared CGNAT, multicast, broadcast, unspecified,
 * documentation, benchmarking, NAT64 local-use, IPv4-translated, Teredo, reserved), IPv4 and
 * IPv6, with the IPv4 addresses an IPv6 one embeds (IPv4-mapped, IPv4-compatible, NAT64
 * 64:ff9b::/96, 6to4) judged as IPv4, and IPv6 outside global unicast (2000::/3) refused.
 * Addresses are compared as bytes, never as text.
 */
import net from 'node:net';

/** An address block: its first bytes and prefix length. */
export interface Block {
  bytes: Uint8Array;
  prefix: number;
}

function ipv4Bytes(address: string): Uint8Array {
  return Uint8Array.from(address.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address (a zone `%…` dropped; a trailing dotted IPv4 part allowed). */
function ipv6Bytes(text: string): Uint8Array {
  let address = text.replace(/%.*$/, '');
  const out = new Uint8Array(16);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted !== null) {
    const v4 = ipv4Bytes(dotted[1] as string);
    const hex = (i: number) => (((v4[i] as number) << 8) | (v4[i + 1] as number)).toString(16);
    address = `${address.slice(0, dotted.index)}${hex(0)}:${hex(2)}`;
  }
  const [head = '', tail] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** The address as bytes (4 for IPv4, 16 for IPv6), or null when it is not an IP address. */
export function addressBytes(address: string): Uint8Array | null {
  const family = net.isIP(address.replace(/%.*$/, ''));
  if (family === 4) return ipv4Bytes(address);
  if (family === 6) return ipv6Bytes(address);
  return null;
}

export function parseBlock(address: string, prefix: number): Block {
  const bytes = addressBytes(address);
  if (bytes === null) throw new Error(`not an IP address: ${address}`);
  return { bytes, prefix };
}

export function inBlock(bytes: Uint8Array, block: Block): boolean {
  if (bytes.length !== block.bytes.length) return false;
  for (let bit = 0; bit < block.prefix; bit += 8) {
    const take = Math.min(8, block.prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    const i = bit / 8;
    if (((bytes[i] as number) & mask) !== ((block.bytes[i] as number) & mask)) return false;
  }
  return true;
}

const block = (cidr: string, name: string) => {
  const [address = '', prefix = ''] = cidr.split('/');
  return { ...parseBlock(address, Number(prefix)), name };
};

const REFUSED_V4 = [
  block('0.0.0.0/8', 'unspecified'),
  block('10.0.0.0/8', 'private'),
  block('100.64.0.0/10', 'shared (CGNAT)'),
  block('127.0.0.0/8', 'loopback'),
  block('169.254.0.0/16', 'link-local'),
  block('172.16.0.0/12', 'private'),
  block('192.0.0.0/24', 'reserved'),
  block('192.0.2.0/24', 'documentation'),
  block('192.88.99.0/24', 'reserved'),
  block('192.168.0.0/16', 'private'),
  block('198.18.0.0/15', 'benchmarking'),
  block('198.51.100.0/24', 'documentation'),
  block('203.0.113.0/24', 'documentation'),
  block('224.0.0.0/4', 'multicast'),
  block('255.255.255.255/32', 'broadcast'),
  block('240.0.0.0/4', 'reserved'),
];

/** Named IPv6 blocks, looked at before the IPv4 an address may carry (the first match names it). */
const REFUSED_V6 = [
  block('::/128', 'unspecified'),
  block('::1/128', 'loopback'),
  // IPv4-translated (SIIT): an IPv4 address reached through a translator, whichever it is.
  block('::ffff:0:0:0/96', 'IPv4-translated'),
  block('64:ff9b:1::/48', 'NAT64 local-use'),
  block('100::/64', 'reserved'),
  block('2001::/32', 'Teredo'),
  block('2001:2::/48', 'benchmarking'),
  block('2001:db8::/32', 'documentation'),
  block('3fff::/20', 'documentation'),
  block('fc00::/7', 'unique-local'),
  block('fe80::/10', 'link-local'),
  block('fec0::/10', 'site-local'),
  block('ff00::/8', 'multicast'),
];

/** The IPv6 blocks whose addresses carry an IPv4 address, and where. */
const EMBEDDING_V4 = [
  { ...block('::ffff:0:0/96', ''), at: 12 },
  { ...block('::/96', ''), at: 12 },
  { ...block('64:ff9b::/96', ''), at: 12 },
  { ...block('2002::/16', ''), at: 2 },
];

/** Global unicast: the only IPv6 space, besides the blocks above carrying IPv4, that is public. */
const GLOBAL_UNICAST = block('2000::/3', '');

/**
 * Why the address may not be reached (the name of its range), or null when it is public. An
 * IPv6 address embedding an IPv4 one is judged by that IPv4 address; any other outside global
 * unicast (2000::/3) is reserved.
 */
export function refusedRange(bytes: Uint8Array): string | null {
  if (bytes.length === 4) return REFUSED_V4.find((b) => inBlock(bytes, b))?.name ?? null;
  const own = REFUSED_V6.find((b) => inBlock(bytes, b));
  if (own !== undefined) return own.name;
  const embedding = EMBEDDING_V4.find((b) => inBlock(bytes, b));
  if (embedding !== undefined) return refusedRange(bytes.slice(embedding.at, embedding.at + 4));
  return inBlock(bytes, GLOBAL_UNICAST) ? null : 'reserved';
}

/** The IPv4 address an IPv4-mapped IPv6 address stands for, else the bytes as they are. */
export function unmapped(bytes: Uint8Array): Uint8Array {
  return bytes.length === 16 && inBlock(bytes, EMBEDDING_V4[0] as Block) ? bytes.slice(12) : bytes;
}
