import { randomBytes } from 'node:crypto';

/** One field of a multipart/form-data body: a plain value, or a file. */
export type FormField = { name: string; value: string } | { name: string; filename: string; contentType: string; bytes: Buffer };

/**
 * Builds a multipart/form-data body (RFC 7578) in memory. Written by hand rather than with a
 * library: it is a few lines, the Bot API needs nothing beyond fields and one file, and a whole
 * Buffer with a known length goes through the same node:http request as a JSON body, so the
 * "fully written" signal that makes a failed send ambiguous applies to uploads unchanged
 * (form-data and friends stream, pull in dependencies and are CommonJS).
 */
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

/** The HTML form encoding of a name inside quotes: `"`, CR and LF percent-encoded. */
function quote(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
