// Variation groups: `{Hi|Hello|Hey}` becomes one option, picked deterministically per (run, chat), so a re-send carries the same text. One level,
// no nesting; a `{` that opens no `|` group stays text; Mustache tags (`{{name}}`) are opaque and may sit inside an option.

/** A piece of a text: literal text, or a group whose options one is chosen from. */
export type TextPiece = { literal: string } | { options: string[] };

/** Splits `text` into literals and groups: `{`, two or more `|`-separated options, `}`, nothing else but whole `{{…}}` tags inside. */
export function parseVariations(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('{{', i)) {
      const end = tagEnd(text, i);
      if (end === -1) {
        literal += text.slice(i);
        break;
      }
      literal += text.slice(i, end);
      i = end;
      continue;
    }
    if (text[i] === '{') {
      const group = readGroup(text, i);
      if (group) {
        if (literal !== '') pieces.push({ literal });
        literal = '';
        pieces.push({ options: group.options });
        i = group.end;
        continue;
      }
    }
    literal += text[i];
    i++;
  }
  if (literal !== '' || pieces.length === 0) pieces.push({ literal });
  return pieces;
}

export function hasVariations(pieces: TextPiece[]): boolean {
  return pieces.some((p) => 'options' in p);
}

function tagEnd(text: string, start: number): number {
  const close = text.indexOf('}}', start + 2);
  return close === -1 ? -1 : close + 2;
}

function readGroup(text: string, start: number): { options: string[]; end: number } | null {
  const options: string[] = [];
  let current = '';
  let j = start + 1;
  while (j < text.length) {
    if (text.startsWith('{{', j)) {
      const end = tagEnd(text, j);
      if (end === -1) return null;
      current += text.slice(j, end);
      j = end;
      continue;
    }
    const c = text[j];
    if (c === '{') return null;
    if (c === '}') {
      options.push(current);
      return options.length > 1 ? { options, end: j + 1 } : null;
    }
    if (c === '|') {
      options.push(current);
      current = '';
    } else {
      current += c;
    }
    j++;
  }
  return null;
}

/** Which option a chat gets: a hash of (run, chat, part, group), so a retry or re-send gets the same pick and chats spread over the options. */
export function variationPick(key: { runId: string; chatId: string; partIndex: number }, groupIndex: number, optionCount: number): number {
  return hash53(`${key.runId}\u0000${key.chatId}\u0000${key.partIndex}\u0000${groupIndex}`) % optionCount;
}

export function chooseVariations(pieces: TextPiece[], key: { runId: string; chatId: string; partIndex: number }): string {
  let out = '';
  let group = 0;
  for (const piece of pieces) {
    if ('literal' in piece) out += piece.literal;
    else out += piece.options[variationPick(key, group++, piece.options.length)]!;
  }
  return out;
}

// cyrb53 (public domain): pure, so libs/core needs no node:crypto; it only spreads picks, nothing relies on it being hard to invert.
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
