import { builtinVars } from '@metronome/core';
import type { CampaignChatRow } from '@metronome/db';
import { z } from 'zod';
import { pageOf, pageQuery, text } from './common.js';

// A campaign's own chats by name (CONTRACT, "Send a test"): what the console's test form picks
// the chat to render the test as from, with the variables it is rendered with.

export const campaignChatsQuery = z.object({
  query: text(1, 200).optional().describe("the chat's title, its `name` variable or its chat id contains it, any case, accents folded"),
  ...pageQuery,
});

const variables = z.record(z.string(), z.string());

export const campaignChat = z
  .object({
    chatId: z.string(),
    threadId: z.number().int().nullable().describe('its forum topic; null: none'),
    title: z.string().nullable().describe("the chat's title in the campaign account's chat directory, else its own `name` variable; null: neither"),
    from: z.enum(['target', 'audience']).describe("target: one of the campaign's own targets; audience: a member of one of its audiences"),
    vars: variables.describe('its own variables, as a run takes them ({}: none)'),
    builtins: variables.describe(
      'the built-in variables the directory gives it (chat.title, chat.kind, chat.memberCount; {}: not in the directory); its own variables win over them',
    ),
  })
  .meta({ id: 'CampaignChat' });
export const campaignChatPage = pageOf(campaignChat);

export function campaignChatView(c: CampaignChatRow): z.output<typeof campaignChat> {
  return { chatId: c.chatId, threadId: c.threadId, title: c.title, from: c.from, vars: c.vars ?? {}, builtins: builtinVars(c.facts) };
}
