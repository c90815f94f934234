/**
 * The `Idempotency-Key` header value (CONTRACT §5): every UTF-8 byte outside visible ASCII, and `%` itself, as `%XX`, since a
 * header carries only that safely; one-to-one, so keys never share a value. A lone surrogate is encoded as WTF-8 does.
 */
export function encodeIdempotencyKey(key: string): string {
  let out = '';
  for (const ch of key) {
    const cp = ch.codePointAt(0)!;
    if (isLiteral(cp)) out += ch;
    else for (const byte of utf8Bytes(cp)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The key an encoded value stands for, or null unless `value` is exactly what encodeIdempotencyKey gives: one spelling per key. */
export function decodeIdempotencyKey(value: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25) {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (isLiteral(c)) {
      bytes.push(c);
    } else {
      return null;
    }
  }
  const key = fromUtf8Bytes(bytes);
  return key !== null && encodeIdempotencyKey(key) === value ? key : null;
}

function isLiteral(cp: number): boolean {
  return cp >= 0x21 && cp <= 0x7e && cp !== 0x25;
}

function utf8Bytes(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/** Generalised UTF-8 (surrogate code points allowed, as utf8Bytes writes them); null when malformed. */
function fromUtf8Bytes(bytes: number[]): string | null {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xf0 && lead < 0xf5 ? 4 : 0;
    if (length === 0 || i + length > bytes.length) return null;
    let cp = length === 1 ? lead : lead & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k]!;
      if ((next & 0xc0) !== 0x80) return null;
      cp = (cp << 6) | (next & 0x3f);
    }
    // Overlong forms and code points past U+10FFFF have another (or no) spelling: not ours.
    if (cp > 0x10ffff || utf8Bytes(cp).length !== length) return null;
    out += String.fromCodePoint(cp);
    i += length;
  }
  return out;
}
