import { couldBeOptOut, optOutKeyword, type Clock } from '@metronome/core';
import type { OptOutRepository } from '@metronome/db';
import type { Logger, Metrics } from '@metronome/observability';
import type { IncomingText } from '@metronome/transports/whatsapp';

export interface OptOutDeps {
  repo: Pick<OptOutRepository, 'keywords' | 'optOut'>;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

const READS_REPLIES = ['whatsapp', 'telegram_user'] as const;
export type RepliesPlatform = (typeof READS_REPLIES)[number];

/** Opt-out by reply (CONTRACT §3): a reply (WhatsApp, telegram_user) that is one of its account's keywords lists the chat and skips it in the account's open runs. */
export class OptOutListener {
  constructor(private readonly d: OptOutDeps) {
    for (const platform of READS_REPLIES) d.metrics.optOuts.inc({ platform }, 0);
  }

  readonly onIncomingText = (accountId: string, message: IncomingText, platform: RepliesPlatform = 'whatsapp'): void => {
    void this.handle(accountId, message, platform).catch((err: unknown) =>
      // The server has this message acknowledged already: it will not come again.
      this.d.logger.error({ err, accountId }, 'opt-out reply not recorded'),
    );
  };

  /** Resolves once the reply is judged, and listed when it matched; returns the keyword, or null. */
  async handle(accountId: string, message: IncomingText, platform: RepliesPlatform = 'whatsapp'): Promise<string | null> {
    if (!couldBeOptOut(message.text)) return null;
    const keyword = optOutKeyword(message.text, await this.d.repo.keywords(accountId));
    if (keyword === null) return null;
    // the person under both identities: a LID-only sender also lists the phone number campaigns name
    const chatIds = message.allChatIds ? await message.allChatIds() : message.chatIds;
    const written = await this.d.repo.optOut(accountId, chatIds, new Date(this.d.clock.now()), platform);
    this.d.metrics.optOuts.inc({ platform });
    this.d.logger.info(
      { accountId, platform, chatId: chatIds[0], keyword, listed: written.listed, skippedTargets: written.skipped },
      'chat opted out by reply',
    );
    return keyword;
  }
}
