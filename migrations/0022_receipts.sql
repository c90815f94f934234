-- Receipts and replies (docs/CONTRACT.md §3 "Receipts"): what the platform tells after it
-- accepted a message. A target gains when it was delivered and read (the earliest a receipt
-- said: receipts come in any order, twice, late or never, and never move a target back), when
-- its chat answered within REPLY_WINDOW, and for groups how many members got and read it.
--
-- New nullable columns and a new table: no table rewrite, no existing row changes meaning.
alter table run_targets
  add column delivered_at timestamptz,
  add column read_at timestamptz,
  add column replied_at timestamptz,
  -- groups: members that got / read it (receipts per member), out of member_count when known
  add column delivered_to integer,
  add column read_by integer,
  add column member_count integer;

-- A group's receipts per member, so a receipt told twice counts once.
create table target_member_receipts (
  run_id uuid not null,
  chat_id text not null,
  member text not null check (length(member) between 1 and 256),
  delivered_at timestamptz,
  read_at timestamptz,
  primary key (run_id, chat_id, member),
  foreign key (run_id, chat_id) references run_targets (run_id, chat_id) on delete cascade
);
