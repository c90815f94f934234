// Live updates from `GET /v1/events`. EventSource cannot send an Authorization header, so the
// stream is read with fetch and a ReadableStream reader; after a drop it reconnects with
// Last-Event-ID and the API replays the run events missed meanwhile.
import { session } from './api.js';

export interface RunEvent {
  runId: string;
  campaignId: string;
  status: string;
  counts: Record<string, number>;
  title: string;
  body: string;
}
export interface AccountEvent {
  accountId: string;
  status: string;
}
/** A directory sync's progress (`directory` events). */
export interface DirectoryEvent {
  accountId: string;
  status: string;
  synced: number;
  size: number;
  until: string | null;
  reason: string | null;
}
type Listener = {
  run?: (e: RunEvent) => void;
  account?: (e: AccountEvent) => void;
  directory?: (e: DirectoryEvent) => void;
  state?: (connected: boolean) => void;
};

const listeners = new Set<Listener>();
let lastEventId: string | null = null;
let controller: AbortController | null = null;
let connected = false;

export function listen(l: Listener): () => void {
  listeners.add(l);
  l.state?.(connected);
  return () => listeners.delete(l);
}

function setConnected(value: boolean) {
  connected = value;
  for (const l of listeners) l.state?.(value);
}

function dispatch(event: string, data: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return;
  }
  for (const l of listeners) {
    if (event === 'run') l.run?.(parsed as RunEvent);
    else if (event === 'account') l.account?.(parsed as AccountEvent);
    else if (event === 'directory') l.directory?.(parsed as DirectoryEvent);
  }
}

/** Opens the stream (once) and keeps it open until stop(). */
export function start(): void {
  if (controller) return;
  controller = new AbortController();
  void loop(controller.signal);
}

export function stop(): void {
  controller?.abort();
  controller = null;
  lastEventId = null;
  setConnected(false);
}

async function loop(signal: AbortSignal): Promise<void> {
  let retryMs = 3000;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${session.token() ?? ''}`, accept: 'text/event-stream' };
      if (lastEventId !== null) headers['last-event-id'] = lastEventId;
      const res = await fetch('/v1/events', { headers, signal });
      if (res.status === 401) return stop();
      if (!res.ok || !res.body) {
        const after = Number(res.headers.get('retry-after'));
        await sleep(after > 0 ? after * 1000 : retryMs, signal);
        continue;
      }
      setConnected(true);
      retryMs = await read(res.body, signal, retryMs);
    } catch {
      // a dropped connection or an abort: fall through to the pause and the reconnect
    }
    setConnected(false);
    await sleep(retryMs, signal);
  }
}

/** Reads SSE frames until the stream ends; answers the server's latest `retry:`. */
async function read(body: ReadableStream<Uint8Array>, signal: AbortSignal, retryMs: number): Promise<number> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return retryMs;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id') lastEventId = text;
        else if (field === 'retry' && /^\d+$/.test(text)) retryMs = Number(text);
      }
      if (data.length) dispatch(event, data.join('\n'));
    }
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
