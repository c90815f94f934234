-- An account that stops delivering (docs/CONTRACT.md §3 "Receipts"): when none of its last
-- sends got a delivery receipt, the scheduler's reconciler sets it `cooling` with reason
-- `not_delivering` (no end: it lifts itself when a delivery receipt comes again, or an
-- operator lifts it). Only accounts whose platform has told receipts are judged: when the
-- first one came is kept here.
--
-- A new nullable column: no table rewrite, no existing row changes meaning.
alter table accounts add column receipts_seen_at timestamptz;

-- The `message.status` webhook (docs/CONTRACT.md §7): receipts of a run's messages, one
-- delivery per run per write of receipts (written by libs/db ReceiptRepository in the same
-- transaction as the targets). The constraints of 0008 gain the new type.
alter table webhooks drop constraint webhooks_events_check;
alter table webhooks add constraint webhooks_events_check
  check (cardinality(events) > 0 and events <@ array['run.status', 'account.status', 'message.status']);
alter table webhook_deliveries drop constraint webhook_deliveries_type_check;
alter table webhook_deliveries add constraint webhook_deliveries_type_check
  check (type in ('run.status', 'account.status', 'message.status'));
