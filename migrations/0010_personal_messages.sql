-- Personal messages (docs/CONTRACT.md §3, campaigns): a target may carry variables for the
-- {{name}} tags of the campaign's texts and captions.
--
-- campaigns.target_vars: {chatId: {name: value}} for the targets given as {chatId, vars}; a
-- chat id absent from it was given as a plain string (the answer shows targets as given).
-- Keyed by chat id rather than by position, so it stays right when the sender renames or drops
-- a moved chat in `targets`. Null when no target has variables.
--
-- run_targets.vars: the run's own copy of its chat's variables, taken when the run is created,
-- so a campaign edited later never changes what a run's re-send says; the sender reads it with
-- the claim that already loads the target. Null for chats without variables.
--
-- Nullable columns without defaults: existing rows are not rewritten, and every campaign and
-- run stays as it was. Safe when two services migrate at once (one transaction, advisory lock).
alter table campaigns add column target_vars jsonb;
alter table run_targets add column vars jsonb;
