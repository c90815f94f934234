import type { WhatsAppSocket, WhatsAppSocketConfig, WhatsAppSocketFactory } from '@metronome/transports/whatsapp';
import { initAuthCreds } from '@whiskeysockets/baileys';
import pino from 'pino';

// One WhatsApp socket of a linked device (fresh credentials, `me` set, keys in memory), opened by
// `factory`: the product's `baileysSocketFactory` against a wire-level server (`url`), or the
// API-level fake's. Resolves once it is open (`unpaired`: a new device, once it offers its first
// pairing QR); `closed` with the status code it closes with.

export interface OpenSocket {
  sock: WhatsAppSocket;
  closed: Promise<number | undefined>;
  creds: ReturnType<typeof initAuthCreds>;
  /** an unpaired device's first QR payload */
  qr?: string;
}

export async function openWhatsAppSocket(
  factory: WhatsAppSocketFactory,
  o: {
    url?: string;
    phone?: string;
    accountId?: string;
    unpaired?: boolean;
    uploadHost?: string;
    getMessage?: WhatsAppSocketConfig['getMessage'];
  } = {},
): Promise<OpenSocket> {
  const creds = initAuthCreds();
  if (!o.unpaired) {
    creds.me = { id: `${o.phone ?? '60177000001'}:3@s.whatsapp.net`, name: 'wire' };
    creds.registered = true;
    // the fake opens a device whose phone signed it (`account` set); Baileys never checks it here
    creds.account = { details: Buffer.alloc(32), accountSignatureKey: Buffer.alloc(32), accountSignature: Buffer.alloc(64), deviceSignature: Buffer.alloc(64) };
  }
  const store: Record<string, unknown> = {};
  const keys = {
    get: async (type: string, ids: string[]) => Object.fromEntries(ids.map((id) => [id, store[`${type}-${id}`]])),
    set: async (data: Record<string, Record<string, unknown>>) => {
      for (const [t, entries] of Object.entries(data)) for (const [id, v] of Object.entries(entries)) store[`${t}-${id}`] = v;
    },
  };
  const sock = factory(o.accountId ?? 'wire-test', {
    auth: { creds, keys: keys as never },
    cachedGroupMetadata: async () => undefined,
    getMessage: o.getMessage ?? (async () => undefined),
    logger: pino({ level: process.env['WIRE_LOG'] ?? 'silent' }),
    connectTimeoutMs: 10_000,
    defaultQueryTimeoutMs: 10_000,
    ...(o.url && { waWebSocketUrl: o.url }),
    ...(o.uploadHost && { customUploadHosts: [{ hostname: o.uploadHost, maxContentLengthBytes: 100 * 1024 * 1024 }] }),
  });
  let closedWith!: (code: number | undefined) => void;
  const closed = new Promise<number | undefined>((r) => (closedWith = r));
  let qr: string | undefined;
  await new Promise<void>((resolve, reject) =>
    sock.ev.on('connection.update', (u) => {
      if (u.qr && o.unpaired && qr === undefined) {
        qr = u.qr;
        resolve();
      }
      if (u.connection === 'open') resolve();
      if (u.connection === 'close') {
        const code = (u.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
        closedWith(code);
        reject(new Error(`closed ${code}`));
      }
    }),
  );
  return { sock, closed, creds, ...(qr !== undefined && { qr }) };
}
