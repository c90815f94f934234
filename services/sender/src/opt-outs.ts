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

/** Opt-out by reply (CONTRACT §3): a WhatsApp reply that is one of its account's keywords lists the chat and skips it in the account's open runs. */
export class OptOutListener {
  constructor(private readonly d: OptOutDeps) {
    d.metrics.optOuts.inc({ platform: 'whatsapp' }, 0);
  }

  readonly onIncomingText = (accountId: string, message: IncomingText): void => {
    void this.handle(accountId, message).catch((err: unknown) =>
      // The server has this message acknowledged already: it will not come again.
      this.d.logger.error({ err, accountId }, 'opt-out reply not recorded'),
    );
  };

  /** Resolves once the reply is judged, and listed when it matched; returns the keyword, or null. */
  async handle(accountId: string, message: IncomingText): Promise<string | null> {
    if (!couldBeOptOut(message.text)) return null;
    const keyword = optOutKeyword(message.text, await this.d.repo.keywords(accountId));
    if (keyword === null) return null;
    // the person under both identities: a LID-only sender also lists the phone number campaigns name
    const chatIds = message.allChatIds ? await message.allChatIds() : message.chatIds;
    const written = await this.d.repo.optOut(accountId, chatIds, new Date(this.d.clock.now()));
    this.d.metrics.optOuts.inc({ platform: 'whatsapp' });
    this.d.logger.info({ accountId, chatId: chatIds[0], keyword, listed: written.listed, skippedTargets: written.skipped }, 'chat opted out by reply');
    return keyword;
  }
}
