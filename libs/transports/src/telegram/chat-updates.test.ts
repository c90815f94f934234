import { chatsFromUpdates } from './chat-updates.js';

const group = { id: -100123, type: 'supergroup', title: 'Team' };
const bot = { id: 1, is_bot: true, first_name: 'B' };
const membership = (status: string, extra: Record<string, unknown> = {}) => ({
  my_chat_member: { chat: group, new_chat_member: { status, user: bot, ...extra } },
});

test('the latest membership of the bot in a chat decides whether it may post', () => {
  expect(chatsFromUpdates([membership('member'), membership('left')])).toEqual([
    { chatId: '-100123', title: 'Team', kind: 'group', memberCount: null, canSend: false, cannotSendReason: 'left' },
  ]);
  expect(chatsFromUpdates([membership('kicked'), membership('administrator')])[0]).toMatchObject({ canSend: true });
  expect(chatsFromUpdates([membership('restricted', { is_member: true, can_send_messages: false })])[0]).toMatchObject({
    canSend: false,
    cannotSendReason: 'forbidden',
  });
});

test('a message shows its chat without undoing a membership the same batch told', () => {
  const chats = chatsFromUpdates([
    membership('restricted', { is_member: true, can_send_messages: false }),
    { message: { message_id: 2, chat: group, text: 'hi' } },
  ]);
  expect(chats[0]).toMatchObject({ canSend: false, cannotSendReason: 'forbidden' });
});

test('a group upgraded to a supergroup leaves its old id unknown; odd updates are skipped', () => {
  const chats = chatsFromUpdates([
    { message: { message_id: 3, chat: { id: -555, type: 'group', title: 'Small' }, migrate_to_chat_id: -100555 } },
    { message: { message_id: 1, chat: { id: -100555, type: 'supergroup', title: 'Small' }, migrate_from_chat_id: -555 } },
    null,
    { edited_message: { chat: group } },
    { message: { chat: {} } },
  ]);
  expect(chats.map((c) => [c.chatId, c.canSend, c.cannotSendReason])).toEqual([
    ['-555', false, 'not_found'],
    ['-100555', true, null],
  ]);
});
