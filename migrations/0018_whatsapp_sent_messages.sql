-- WhatsApp messages a recipient may ask to have re-sent (docs/CONTRACT.md §2,
-- WHATSAPP_RESEND_DAYS): a device that could not decrypt a message asks the sender to encrypt
-- it again, hours or days later, and whichever replica holds the account's socket then
-- answers from here. Kept per account and message id (the id Metronome gave the message, the
-- same whatever identity, phone number or LID, the retry names the chat by); the sender
-- deletes rows older than the setting.
--
-- Safe when two services migrate at once: the migrator serialises on an advisory lock and runs
-- this in one transaction. A new table only; no existing row is touched.

create table whatsapp_sent_messages (
  account_id uuid not null references accounts (id) on delete cascade,
  message_id text not null check (length(message_id) between 1 and 128),
  -- the message as Baileys sent it (proto.Message, protobuf-encoded)
  message bytea not null,
  sent_at timestamptz not null,
  primary key (account_id, message_id)
);

-- The periodic cleanup deletes the oldest rows first.
create index whatsapp_sent_messages_sent_at_idx on whatsapp_sent_messages (sent_at);
