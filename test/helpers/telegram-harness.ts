import { TelegramTransport } from '@metronome/transports';
import { FakeTelegramBotApi } from './fake-telegram-bot-api.js';
import { startSenderHarness, type SenderHarness } from './sender-harness.js';
import type { SenderSettings } from '../../services/sender/src/deps.js';

/**
 * The sender harness with a `telegram` transport pointed at a fake Bot API that keeps the
 * harness's clock: what every Telegram test of the sender job starts from.
 */
export async function startTelegramHarness(settings: Partial<SenderSettings> = {}): Promise<{ fake: FakeTelegramBotApi; h: SenderHarness }> {
  const fake = await FakeTelegramBotApi.start();
  const h = await startSenderHarness(settings, undefined, {
    transports: (clock) => {
      fake.setClock(() => clock.now());
      return { telegram: new TelegramTransport({ baseUrl: fake.url, timeoutMs: 5000 }) };
    },
  });
  return { fake, h };
}
