/**
 * Typed events: loops say what happened, subscribers turn it into metrics and logs. Not node:events, so payloads are typed,
 * `error` is not special, and delivery is synchronous in subscription order (a subscriber's throw reaches the emitter).
 */
export class EventBus<M extends object> {
  private readonly handlers = new Map<keyof M, Array<(event: never) => void>>();

  /** Calls `handler` for every `name` event from now on; returns the unsubscribe. */
  on<K extends keyof M>(name: K, handler: (event: M[K]) => void): () => void {
    // Lists are replaced, never changed: an emit under way keeps its list, so (un)subscribing mid-emit skips no one.
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), handler]);
    return () => {
      const list = this.handlers.get(name) ?? [];
      this.handlers.set(
        name,
        list.filter((h) => h !== handler),
      );
    };
  }

  /** Delivers `event` to every subscriber of `name`, in subscription order. */
  emit<K extends keyof M>(name: K, event: M[K]): void {
    const list = this.handlers.get(name);
    if (!list) return;
    for (const handler of list) (handler as (event: M[K]) => void)(event);
  }
}

/** The events of one kind a subscriber handles, each by its own function. */
export type Subscriber<M extends object> = { [K in keyof M]?: (event: M[K]) => void };

/** Subscribes each handler of `subscriber` to its event; returns the unsubscribe of them all. */
export function subscribe<M extends object>(bus: EventBus<M>, subscriber: Subscriber<M>): () => void {
  const offs = (Object.keys(subscriber) as (keyof M)[]).map((name) => bus.on(name, subscriber[name] as (event: M[keyof M]) => void));
  return () => {
    for (const off of offs) off();
  };
}
