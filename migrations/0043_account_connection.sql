-- Whether an account's WhatsApp or Telegram connection is kept open whether or not a run sends
-- ('always', the default: receipts, replies and opt-outs arrive when they happen) or opened by its
-- jobs only ('on_demand'). Safe when two services migrate at once; a constant default rewrites no row.
alter table accounts add column connection text not null default 'always' check (connection in ('always', 'on_demand'));
