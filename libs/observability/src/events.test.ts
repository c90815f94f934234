import { EventBus, subscribe } from './events.js';

interface Map {
  a: { n: number };
  error: { why: string };
}

describe('EventBus', () => {
  test('delivers each event to its subscribers, in order, before emit returns; unsubscribed ones hear nothing more', () => {
    const bus = new EventBus<Map>();
    const heard: string[] = [];
    const off = bus.on('a', (e) => heard.push(`first ${e.n}`));
    bus.on('a', (e) => heard.push(`second ${e.n}`));
    bus.emit('a', { n: 1 });
    off();
    bus.emit('a', { n: 2 });
    expect(heard).toEqual(['first 1', 'second 1', 'second 2']);
  });

  test('a subscriber that unsubscribes itself while handling an event does not make the next one miss it', () => {
    const bus = new EventBus<Map>();
    const heard: string[] = [];
    const off = bus.on('a', () => {
      heard.push('once');
      off();
    });
    bus.on('a', (e) => heard.push(`always ${e.n}`));
    bus.emit('a', { n: 1 });
    bus.emit('a', { n: 2 });
    expect(heard).toEqual(['once', 'always 1', 'always 2']);
  });

  test('an event nobody hears is dropped, `error` included (node:events would throw)', () => {
    const bus = new EventBus<Map>();
    expect(() => bus.emit('error', { why: 'x' })).not.toThrow();
  });

  test('a subscriber that throws throws into the emitter, as an inline call would', () => {
    const bus = new EventBus<Map>();
    bus.on('a', () => {
      throw new Error('bug');
    });
    expect(() => bus.emit('a', { n: 1 })).toThrow('bug');
  });

  test('subscribe wires every handler of a subscriber, and its unsubscribe removes them all', () => {
    const bus = new EventBus<Map>();
    const heard: string[] = [];
    const off = subscribe(bus, { a: (e) => heard.push(`a ${e.n}`), error: (e) => heard.push(`error ${e.why}`) });
    bus.emit('a', { n: 1 });
    bus.emit('error', { why: 'w' });
    off();
    bus.emit('a', { n: 2 });
    expect(heard).toEqual(['a 1', 'error w']);
  });
});
