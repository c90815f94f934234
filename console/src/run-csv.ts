// CSV export of a run's chats, built in the browser from the paged API. Cells escaped and quoted
// by the product's one CSV rule (libs/core csv-cell.ts); a plain signed number (a Telegram
// group's chat id, -1001234567890) stays a number: it runs nothing. No DOM here: the API tests
// build the same file from the API's answer (test/api/chat-titles.test.ts).
import { csvRows } from '../../libs/core/src/csv-cell.js';
import type { components } from './api-types.js';

type RunTarget = components['schemas']['RunTarget'];

const cell = (v: string | number | null | undefined): string => (v === null || v === undefined ? '' : String(v));

/** The run's chats as CSV text, one row a chat, a header first. */
export function targetsCsv(targets: RunTarget[]): string {
  // added columns go last (receipts and replies, then the title): the earlier keep their places
  const head = [
    'chatId',
    'status',
    'attempts',
    'nextAttemptAt',
    'sentAt',
    'waitingReason',
    'waiting',
    'errorCode',
    'errorMessage',
    'deliveredAt',
    'readAt',
    'repliedAt',
    'deliveredTo',
    'readBy',
    'memberCount',
    'title',
  ];
  const rows = targets.map((t) =>
    [
      t.chatId,
      t.status,
      t.attempts,
      t.nextAttemptAt,
      t.sentAt,
      t.waiting?.reason,
      t.waiting?.detail,
      t.error?.code,
      t.error?.message,
      t.deliveredAt,
      t.readAt,
      t.repliedAt,
      t.deliveredTo,
      t.readBy,
      t.memberCount,
      t.title,
    ].map(cell),
  );
  return csvRows([head, ...rows], true);
}
