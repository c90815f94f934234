/**
 * Scrubs secrets by value. Field-name redaction (the logger's paths) only covers a secret where
 * we expect it; a platform that quotes a request URL or header in its error text, or an
 * exception that prints its input, puts one anywhere. So whoever opens a secret registers it
 * here, and every error message that is stored, answered or logged passes through `scrub`.
 *
 * Pure: it keeps strings and replaces them. The process-wide instance is `processSecrets()`.
 */
export const REDACTED = '[redacted]';

/**
 * Shorter strings are never registered: scrubbing a 3-letter "secret" would redact ordinary
 * words everywhere, and no credential we accept is that short (bot tokens' secret part is 20+
 * characters, API keys 16+).
 */
export const MIN_SECRET_LENGTH = 8;

/** Every form in which a secret may appear in text we handle: as is, in a URL, inside JSON. */
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

  /** `capacity`: the most secrets kept; beyond it the oldest is dropped (accounts come and go). */
  constructor(private readonly capacity = 100_000) {}

  /** Registers a secret (and its encoded forms). Anything not a string of 8+ characters is ignored. */
  add(secret: unknown): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) return;
    // Known already (a transport registers its account's credentials on every send). Its forms
    // are kept newer than it (below), and the oldest entries go first: while it is kept, so are they.
    if (this.secrets.has(secret)) return;
    for (const form of secretForms(secret)) {
      // a form an older entry registered first moves up to here (a Set keeps insertion order)
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

  /** `text` with every registered secret replaced by `[redacted]`. */
  scrub(text: string): string {
    if (this.secrets.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    // One alternation, longest first, so a secret that contains another is replaced whole.
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

// Kept on globalThis under a registered symbol so that every package of the process sees one
// registry, including libs/observability's logger, which does not depend on this package.
const KEY = Symbol.for('metronome.processSecrets');

/** The process-wide registry: every secret this process has opened. */
export function processSecrets(): SecretScrubber {
  const g = globalThis as { [KEY]?: SecretScrubber };
  return (g[KEY] ??= new SecretScrubber());
}
