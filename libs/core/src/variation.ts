// Variation groups in message texts: `{Hi|Hello|Hey}` becomes one of its options, picked
// deterministically per (run, chat), so a re-send of a chat carries the same text.
//
// Hand-written because npm has no well-kept spintax library (the few there are unmaintained,
// nest arbitrarily and pick with Math.random); the rule needed here is small: one level, no
// nesting, and a `{` that opens no `|` group stays text. Mustache tags (`{{name}}`) are opaque
// here, so a tag may sit inside an option (`{Hi {{name}}|Hello}`) and `{{…}}` never opens a group.

/** A piece of a text: literal text, or a group whose options one is chosen from. */
export type TextPiece = { literal: string } | { options: string[] };

/**
 * Splits `text` into literal pieces and variation groups. A group is a `{`, then at least two
 * options separated by `|`, then `}`, with no other `{` or `}` inside except whole `{{…}}` tags.
 * Anything else (`{x}`, `{a|b` unclosed, `{a|{b|c}}` nested: the inner one is the group) is text.
 * Adjacent literals are merged, so a text without groups is one literal piece.
 */
export function parseVariations(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('{{', i)) {
      const end = tagEnd(text, i);
      // An unclosed tag is left for the template parser to report.
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

/** Whether a text has at least one variation group. */
export function hasVariations(pieces: TextPiece[]): boolean {
  return pieces.some((p) => 'options' in p);
}

// The index just past the `}}` closing the tag opened at `start`, or -1.
function tagEnd(text: string, start: number): number {
  const close = text.indexOf('}}', start + 2);
  return close === -1 ? -1 : close + 2;
}

// The group opened by the `{` at `start`, or null when that `{` opens none.
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

/**
 * Which option of a group a chat gets: a hash of (run, chat, part, group) modulo the number of
 * options. The same run and chat always get the same pick (a retry, a re-send after a crash);
 * other chats and other runs spread over the options.
 */
export function variationPick(key: { runId: string; chatId: string; partIndex: number }, groupIndex: number, optionCount: number): number {
  return hash53(`${key.runId}\u0000${key.chatId}\u0000${key.partIndex}\u0000${groupIndex}`) % optionCount;
}

/** Joins the pieces, each group replaced by the option the key picks. */
export function chooseVariations(pieces: TextPiece[], key: { runId: string; chatId: string; partIndex: number }): string {
  let out = '';
  let group = 0;
  for (const piece of pieces) {
    if ('literal' in piece) out += piece.literal;
    else out += piece.options[variationPick(key, group++, piece.options.length)]!;
  }
  return out;
}

// cyrb53 (public domain): a small, fast string hash with 53 well-mixed bits. Pure, so libs/core
// needs no node:crypto; it only spreads picks, nothing relies on it being hard to invert.
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
