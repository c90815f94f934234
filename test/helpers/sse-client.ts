import http from 'node:http';

// A client for GET /v1/events over a real connection, as a browser's EventSource would see it.

export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

export interface EventStream {
  status: number;
  events: SseEvent[];
  comments: string[];
  ended: boolean;
  close(): void;
}

/** Opens `{base}/v1/events` and collects what arrives; resolves once the response head is in. */
export function openEventStream(base: string, token: string | null, lastEventId?: number): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (token) headers['authorization'] = `Bearer ${token}`;
    if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
    const req = http.get(`${base}/v1/events`, { headers }, (res) => {
      const stream: EventStream = { status: res.statusCode ?? 0, events: [], comments: [], ended: false, close: () => req.destroy() };
      res.on('end', () => {
        stream.ended = true;
      });
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields: Record<string, string> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) stream.comments.push(line);
            const colon = line.indexOf(': ');
            if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 2);
          }
          if (fields['event']) stream.events.push({ id: fields['id'] ?? '', event: fields['event'], data: JSON.parse(fields['data'] ?? 'null') });
        }
      });
      res.on('error', () => undefined);
      resolve(stream);
    });
    req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
  });
}
