// Which addresses are not the public internet, for requests to addresses a tenant chose (webhooks).

export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p))) return null;
  const bytes = parts.map(Number);
  return bytes.every((b) => b <= 255) ? bytes : null;
}

export function parseIPv6(text: string): number[] | null {
  const address = text.replace(/%.*$/, '');
  if (!/^[0-9a-fA-F:.]+$/.test(address) || !address.includes(':')) return null;
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string): number[] | null => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIPv4(piece);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) out.push(parseInt(piece, 16));
      else return null;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : null;
}

// "this network", RFC 1918, CGNAT, loopback, link-local (cloud metadata at 169.254.169.254), IETF, benchmarking, multicast and reserved
const V4_RANGES: [number[], number][] = [
  [[0, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[100, 64, 0, 0], 10],
  [[127, 0, 0, 0], 8],
  [[169, 254, 0, 0], 16],
  [[172, 16, 0, 0], 12],
  [[192, 0, 0, 0], 24],
  [[192, 168, 0, 0], 16],
  [[198, 18, 0, 0], 15],
  [[224, 0, 0, 0], 4],
  [[240, 0, 0, 0], 4],
];

function inV4Range(bytes: number[], [base, bits]: [number[], number]): boolean {
  const value = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  const start = ((base[0]! << 24) | (base[1]! << 16) | (base[2]! << 8) | base[3]!) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (value & mask) >>> 0 === (start & mask) >>> 0;
}

/** Whether an IP address is not public; null when `address` is a host name. */
export function isNonPublicAddress(address: string): boolean | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseIPv4(bare);
  if (v4) return V4_RANGES.some((range) => inV4Range(v4, range));
  const v6 = parseIPv6(bare);
  if (!v6) return null;
  const [g0, , , , , g5, g6, g7] = v6 as [number, number, number, number, number, number, number, number];
  const embeddedV4 = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  const zeros = (n: number) => v6.slice(0, n).every((g) => g === 0);
  if (zeros(8)) return true; // :: unspecified
  if (zeros(7) && g7 === 1) return true; // ::1 loopback
  if ((zeros(5) && g5 === 0xffff) || zeros(6)) return V4_RANGES.some((range) => inV4Range(embeddedV4, range));
  if (g0 === 0x64 && v6[1] === 0xff9b && v6.slice(2, 6).every((g) => g === 0)) return V4_RANGES.some((range) => inV4Range(embeddedV4, range));
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  if ((g0 & 0xffc0) === 0xfec0) return true; // site-local (deprecated) fec0::/10
  return false;
}
