import { previewTexts } from '@metronome/core';
import { AudienceMemberRepository, ChatDirectoryRepository, type MessagePart } from '@metronome/db';
import type { ApiContext } from './context.js';
import { invalidField } from './errors.js';
import { chatIdOf, threadIdOf, type CampaignTarget } from './personal-rules.js';
import type { PreviewMessage } from './schemas/previews.js';

/** The run id a preview's variations are picked for: one run's picks, not every run's. */
const PREVIEW_RUN = 'preview';

export interface PreviewedCampaign {
  tenantId: string;
  accountId: string;
  messages: MessagePart[];
  targets: CampaignTarget[];
  audienceIds: string[];
}

/**
 * The message as one of the campaign's chats receives it (the sender's rule): the `chosen` chat, else the first target or
 * audience member; null when there is none. Variables as a run takes them, built-ins from the chat directory.
 */
export async function previewMessage(
  ctx: ApiContext,
  c: PreviewedCampaign,
  chosen: { chatId?: string | undefined; threadId?: number | undefined },
): Promise<PreviewMessage | null> {
  const chat = await chatToPreview(ctx, c, chosen);
  if (!chat) return null;
  const facts = (await new ChatDirectoryRepository(ctx.db).facts(c.tenantId, c.accountId, [chat.chatId])).get(chat.chatId) ?? null;
  const texts = c.messages.map((m) => (m.type === 'text' ? m.text : m.caption));
  const rendered = previewTexts(texts, { runId: PREVIEW_RUN, chatId: chat.chatId }, chat.vars, facts);
  return {
    chatId: chat.chatId,
    threadId: chat.threadId ?? null,
    title: facts?.title || chat.vars?.['name'] || null,
    from: chat.from,
    parts: c.messages.map((m, i) => ({ type: m.type, text: rendered[i]?.text ?? null, spans: rendered[i]?.spans ?? [] })),
  };
}

interface PreviewChat {
  chatId: string;
  threadId?: number | undefined;
  vars: Record<string, string> | null;
  from: 'target' | 'audience';
}

async function chatToPreview(
  ctx: ApiContext,
  c: PreviewedCampaign,
  chosen: { chatId?: string | undefined; threadId?: number | undefined },
): Promise<PreviewChat | null> {
  const target = chosen.chatId === undefined ? c.targets[0] : c.targets.find((t) => chatIdOf(t) === chosen.chatId && threadIdOf(t) === chosen.threadId);
  if (target !== undefined) {
    const vars = typeof target === 'string' ? null : (target.vars ?? null);
    return { chatId: chatIdOf(target), threadId: threadIdOf(target), vars, from: 'target' };
  }
  const pick = chosen.chatId === undefined ? undefined : { chatId: chosen.chatId, threadId: chosen.threadId ?? 0 };
  const member = await new AudienceMemberRepository(ctx.db).firstMember(c.audienceIds, pick);
  if (member) return { chatId: member.chatId, threadId: member.threadId, vars: member.vars, from: 'audience' };
  if (pick) throw invalidField('chatId', "not one of the campaign's chats (its targets and its audiences' members)");
  return null;
}
