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

export class SecretScrubber {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | null = null;

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
      if (this.secrets.size > this.capacity) this.secrets.delete(this.secrets.values().next().value!);
      this.pattern = null;
    }
  }

  get size(): number {
    return this.secrets.size;
  }

  scrub(text: string): string {
    if (this.secrets.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    // longest first, so a secret that contains another is replaced whole
    this.pattern ??= new RegExp(
      [...this.secrets]
        .sort((a, b) => b.length - a.length)
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|'),
      'g',
    );
    return text.replace(this.pattern, REDACTED);
  }
}

// on globalThis under a registered symbol, so every package of the process (libs/observability's logger too) sees one registry
const KEY = Symbol.for('metronome.processSecrets');

export function processSecrets(): SecretScrubber {
  const g = globalThis as { [KEY]?: SecretScrubber };
  return (g[KEY] ??= new SecretScrubber());
}
