/** Scrubs secrets by value: a platform's error text may quote a URL or header, so every error message stored, answered or logged passes through it. */
export const REDACTED = '[redacted]';

/** Shorter strings are never registered: they would redact ordinary words, and no credential we accept is that short. */
export const MIN_SECRET_LENGTH = 8;

export function secretForms(secret: string): string[] {
  const forms = new Set([secret]);
  try {
    forms.add(encodeURIComponent(secret));
  } catch {
    // a lone surrogate cannot be URL-encoded, so it cannot appear URL-encoded either
  }
  forms.add(JSON.stringify(secret).slice(1, -1));
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * The secrets are found through an index of their first MIN_SECRET_LENGTH characters, kept as they come and go: a text is
 * scanned once whatever their number. One regular expression of them all (thousands with a thousand WhatsApp accounts)
 * was compiled again after each new one and tried every alternative at every position of every line.
 */
export class SecretScrubber {
  private readonly secrets = new Set<string>();
  /** the secrets by their first characters, longest first */
  private readonly byPrefix = new Map<string, string[]>();

  constructor(private readonly capacity = 100_000) {}

  add(secret: unknown): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) return;
    // known already; its forms are kept newer than it, and the oldest go first, so while it is kept, so are they
    if (this.secrets.has(secret)) return;
    for (const form of secretForms(secret)) {
      if (this.secrets.delete(form)) {
        this.secrets.add(form);
        continue;
      }
      this.secrets.add(form);
      this.index(form);
      if (this.secrets.size > this.capacity) {
        const oldest = this.secrets.values().next().value!;
        this.secrets.delete(oldest);
        this.unindex(oldest);
      }
    }
  }

  get size(): number {
    return this.secrets.size;
  }

  scrub(text: string): string {
    if (this.secrets.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    let out = '';
    let from = 0;
    for (let i = 0; i + MIN_SECRET_LENGTH <= text.length; ) {
      // longest first, so a secret that contains another is replaced whole
      const found = this.byPrefix.get(text.slice(i, i + MIN_SECRET_LENGTH))?.find((s) => text.startsWith(s, i));
      if (!found) {
        i++;
        continue;
      }
      out += text.slice(from, i) + REDACTED;
      i += found.length;
      from = i;
    }
    return from === 0 ? text : out + text.slice(from);
  }

  private index(secret: string): void {
    const key = secret.slice(0, MIN_SECRET_LENGTH);
    const list = this.byPrefix.get(key) ?? [];
    const at = list.findIndex((s) => s.length < secret.length);
    list.splice(at < 0 ? list.length : at, 0, secret);
    this.byPrefix.set(key, list);
  }

  private unindex(secret: string): void {
    const key = secret.slice(0, MIN_SECRET_LENGTH);
    const list = this.byPrefix.get(key)?.filter((s) => s !== secret) ?? [];
    if (list.length > 0) this.byPrefix.set(key, list);
    else this.byPrefix.delete(key);
  }
}

// on globalThis under a registered symbol, so every package of the process (libs/observability's logger too) sees one registry
const KEY = Symbol.for('metronome.processSecrets');

export function processSecrets(): SecretScrubber {
  const g = globalThis as { [KEY]?: SecretScrubber };
  return (g[KEY] ??= new SecretScrubber());
}
