-- The account settings of limits that keep no column of their own (libs/core limits.ts: a
-- limit's `setting`), each under its API field, e.g. {"chatCap": {"count": 2, "per": "day"}}:
-- a new limit adds an entry, not a column. Absent: the limit is off.
--
-- Safe when two services migrate at once (advisory lock, one transaction); a constant default:
-- no row is rewritten.
alter table accounts add column limits jsonb not null default '{}'::jsonb;
