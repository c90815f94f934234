// Text that comes from outside the console (chat titles and ids from a platform, CSV values and
// file names from whoever wrote them): shown bidi-isolated, so a right-to-left override in it
// (U+202E) cannot reorder the console's own words beside it, and wrapping anywhere, so a long
// unbroken name cannot widen the page.
import type { ComponentChildren } from 'preact';

/** Outside text as an isolated, wrapping run (`<bdi>`, styled in styles.css). */
export function Outside({ children, class: cls }: { children: ComponentChildren; class?: string }) {
  return <bdi class={cls ? `outside ${cls}` : 'outside'}>{children}</bdi>;
}

/**
 * Outside text inside a plain string (a note, an aria-label is left as is): wrapped in U+2068
 * FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE, the string form of `<bdi>`.
 */
export const isolated = (text: string): string => `\u2068${text}\u2069`;
