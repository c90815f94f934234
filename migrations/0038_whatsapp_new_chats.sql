-- What WhatsApp lets a whatsapp account do with NEW one-to-one chats (docs/platforms.md "New
-- chats", libs/core new-chat-limits.ts), as account state every replica honours before a send:
-- `new_chats_refused_at`: a message to a new chat was refused with 463 (no privacy token); new
-- chats wait until an operator lifts it. `reachout_lock_until`/`_type`: WhatsApp's reach-out time
-- lock, until its end (fetched on connect, pushed by notification, fetched again after a 463).
-- `new_chat_cap`: WhatsApp's new-chat message cap as last told ({status, total, used,
-- cycleEndsAt, toldAt}). Columns only, nullable: no row is rewritten.
alter table accounts
  add column new_chats_refused_at timestamptz,
  add column reachout_lock_until timestamptz,
  add column reachout_lock_type text,
  add column new_chat_cap jsonb;
