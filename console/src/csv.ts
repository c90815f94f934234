// CSV export of a run's chats, built in the browser from the paged API, and saving a CSV.
// Cells escaped and quoted by the product's one CSV rule (libs/core csv-cell.ts); a plain signed
// number (a Telegram group's chat id, -1001234567890) stays a number: it runs nothing.
import { csvRows } from '../../libs/core/src/csv-cell.js';
import type { RunTarget } from './api.js';

const cell = (v: string | number | null | undefined): string => (v === null || v === undefined ? '' : String(v));

export function targetsCsv(targets: RunTarget[]): string {
  // receipts and replies last: the earlier columns keep their places
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
    ].map(cell),
  );
  return csvRows([head, ...rows], true);
}

/**
 * Saves CSV text as a file, beginning with a UTF-8 BOM (spreadsheets then read it as UTF-8):
 * the API's export has one, but reading an answer as text drops it, so it is put back here.
 */
export function downloadCsv(filename: string, text: string): void {
  const bom = text.startsWith('\ufeff') ? '' : '\ufeff';
  const url = URL.createObjectURL(new Blob([bom + text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
