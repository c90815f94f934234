// Data hooks: names of campaigns and accounts for display, and a reload that follows the live
// events (and a slow poll, since waiting and eta change with time, not only with events).
import { useEffect, useRef, useState } from 'preact/hooks';
import { allPages, api, type Account, type Campaign, type Page } from './api.js';
import { listen, type AccountEvent, type DirectoryEvent, type RunEvent } from './events.js';

export interface Names {
  campaigns: Map<string, Campaign>;
  accounts: Map<string, Account>;
}

export function useNames(): Names {
  const [names, setNames] = useState<Names>({ campaigns: new Map(), accounts: new Map() });
  useEffect(() => {
    void Promise.all([allPages((cursor) => api.campaigns({ limit: 500, cursor })), allPages((cursor) => api.accounts({ limit: 500, cursor }))]).then(
      ([campaigns, accounts]) => setNames({ campaigns: new Map(campaigns.map((c) => [c.id, c])), accounts: new Map(accounts.map((a) => [a.id, a])) }),
      () => undefined,
    );
  }, []);
  return names;
}

const POLL_MS = 10_000;

/**
 * Calls `reload` now, after every relevant live event (coalesced), and every 10 s while the tab
 * is visible. `relevant` filters the events; `deps` restart it. `reload` is given `current`,
 * true while no later reload began: it shows its answer only then, so an answer that came late
 * (another filter's, or older data) never replaces a newer one.
 */
export function useLive(
  reload: (current: () => boolean) => Promise<void>,
  relevant: (e: RunEvent | AccountEvent | DirectoryEvent) => boolean,
  deps: unknown[],
): void {
  const latest = useRef(reload);
  latest.current = reload;
  const asked = useRef(0);
  useEffect(() => {
    const begin = () => {
      const mine = ++asked.current;
      return latest.current(() => mine === asked.current);
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void begin(), 250);
    };
    void begin();
    const unlisten = listen({ run: (e) => relevant(e) && soon(), account: (e) => relevant(e) && soon(), directory: (e) => relevant(e) && soon() });
    const poll = setInterval(() => document.visibilityState === 'visible' && void begin(), POLL_MS);
    return () => {
      clearTimeout(timer);
      clearInterval(poll);
      unlisten();
    };
  }, deps);
}

/** The current time, ticking every second: countdowns. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/** `value`, once it has stayed the same for `ms` (a search box's query). */
export function useDebounced<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value]);
  return settled;
}

/**
 * A searched, cursor-paged list: the search box's text (debounced), the page it shows, and the
 * cursors of the pages so far (a new search starts over). `version` changes reload the page.
 */
export function useSearchPages<T>(load: (q: string, cursor: string | undefined) => Promise<Page<T>>, version: unknown) {
  const [query, setQuery] = useState('');
  const q = useDebounced(query.trim());
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page<T> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => setCursors([undefined]), [q]);
  useEffect(() => {
    let live = true;
    load(q, cursor).then(
      (p) => live && (setPage(p), setError(null)),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [q, cursor, version]);
  return { query, setQuery, q, cursors, setCursors, page, error, setError };
}
