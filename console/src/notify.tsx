// A run that pauses or finishes partial needs the operator: a browser notification with the
// event's title and body, or an in-page toast when notifications are not allowed.
import { useEffect, useState } from 'preact/hooks';
import { listen, type RunEvent } from './events.js';

interface Toast {
  id: number;
  title: string;
  body: string;
  runId: string;
}
let nextId = 1;

export const wantsAttention = (e: RunEvent) => e.status === 'paused' || e.status === 'partial';

export function Toasts() {
  const [toasts, setToasts] = useState<Toast[]>([]);
  useEffect(
    () =>
      listen({
        run: (e) => {
          if (!wantsAttention(e)) return;
          if ('Notification' in window && Notification.permission === 'granted') {
            new Notification(e.title, { body: e.body, tag: `run-${e.runId}` });
            return;
          }
          const toast = { id: nextId++, title: e.title, body: e.body, runId: e.runId };
          setToasts((t) => [...t.slice(-3), toast]);
        },
      }),
    [],
  );
  const dismiss = (id: number) => setToasts((t) => t.filter((x) => x.id !== id));
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((t) => (
        <div class="toast" key={t.id}>
          <strong>{t.title}</strong>
          <p>{t.body}</p>
          <a href={`#/runs/${t.runId}`} onClick={() => dismiss(t.id)}>
            Open run
          </a>{' '}
          <button type="button" onClick={() => dismiss(t.id)}>
            Dismiss
          </button>
        </div>
      ))}
    </div>
  );
}

/** Offers to turn on browser notifications while they are neither granted nor refused. */
export function NotificationSwitch() {
  const supported = 'Notification' in window;
  const [permission, setPermission] = useState(supported ? Notification.permission : 'denied');
  if (!supported || permission !== 'default') return null;
  return (
    <button type="button" class="link" onClick={() => void Notification.requestPermission().then(setPermission)}>
      Turn on notifications
    </button>
  );
}
