import type { Transport } from './transport.js';

/** What the send path reads of a transport besides its methods: known before it is built. */
export type TransportShape = Pick<Transport, 'platform' | 'mediaUpload' | 'textLimits' | 'typingLastsMs'>;

export const WHATSAPP_SHAPE = { platform: 'whatsapp' } as const satisfies TransportShape;

export const TELEGRAM_USER_SHAPE = {
  platform: 'telegram_user',
  textLimits: { text: 4_096, caption: 1_024 },
  typingLastsMs: 5_000,
} as const satisfies TransportShape;
