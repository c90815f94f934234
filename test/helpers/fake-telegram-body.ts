/** One parameter of a Bot API request: a value, or an uploaded file. */
export interface Field {
  value: string;
  file?: { filename: string; contentType: string; bytes: Buffer };
}

/** The request's parameters, as the Bot API accepts them: JSON, urlencoded or multipart. */
export function parseBody(contentType: string, body: Buffer): Map<string, Field> {
  const fields = new Map<string, Field>();
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    const value = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value)) fields.set(k, { value: typeof v === 'string' ? v : JSON.stringify(v) });
  } else if (type === 'application/x-www-form-urlencoded') {
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) fields.set(k, { value: v });
  } else if (type === 'multipart/form-data') {
    const boundary = /boundary=("?)([^";]+)\1/i.exec(contentType)?.[2];
    if (!boundary) throw new Error('multipart without a boundary');
    const delimiter = Buffer.from(`--${boundary}`);
    let at = body.indexOf(delimiter);
    while (at >= 0) {
      const start = at + delimiter.length;
      if (body.subarray(start, start + 2).toString() === '--') break;
      const next = body.indexOf(delimiter, start);
      if (next < 0) throw new Error('multipart not terminated');
      // each part: CRLF, headers, CRLF CRLF, content, CRLF, next delimiter
      const part = body.subarray(start + 2, next - 2);
      const split = part.indexOf('\r\n\r\n');
      const headers = part.subarray(0, split).toString('utf8');
      const content = part.subarray(split + 4);
      const name = /name="([^"]*)"/i.exec(headers)?.[1];
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      const partType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? 'application/octet-stream';
      if (name !== undefined) {
        fields.set(
          name,
          filename !== undefined ? { value: '', file: { filename, contentType: partType, bytes: Buffer.from(content) } } : { value: content.toString('utf8') },
        );
      }
      at = next;
    }
  }
  return fields;
}
