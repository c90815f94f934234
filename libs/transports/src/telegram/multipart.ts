import { randomBytes } from 'node:crypto';

export type FormField = { name: string; value: string } | { name: string; filename: string; contentType: string; bytes: Buffer };

/** multipart/form-data (RFC 7578) as one Buffer, so uploads go through the same node:http request and "fully written" signal as JSON. */
export function multipartBody(fields: FormField[], boundary = `metronome-${randomBytes(16).toString('hex')}`): { contentType: string; bytes: Buffer } {
  const chunks: Buffer[] = [];
  for (const field of fields) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(field.name)}"`;
    if ('bytes' in field) head += `; filename="${quote(field.filename)}"\r\nContent-Type: ${field.contentType.replace(/[\r\n]/g, '')}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'), 'bytes' in field ? field.bytes : Buffer.from(field.value, 'utf8'), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, bytes: Buffer.concat(chunks) };
}

function quote(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
