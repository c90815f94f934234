-- An account that stops delivering (docs/CONTRACT.md §3 "Receipts"): when none of its last
-- sends got a delivery receipt, the scheduler's reconciler sets it `cooling` with reason
-- `not_delivering` (no end: it lifts itself when a delivery receipt comes again, or an
-- operator lifts it). Only accounts whose platform has told receipts are judged: when the
-- first one came is kept here.
--
-- A new nullable column: no table rewrite, no existing row changes meaning.
alter table accounts add column receipts_seen_at timestamptz;
