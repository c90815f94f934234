// CSV export of a run's chats, built in the browser from the paged API.
import type { RunTarget } from './api.js';

const cell = (v: string | number | null | undefined): string => {
  const s = v === null || v === undefined ? '' : String(v);
  // a leading = + - @ would make a spreadsheet run the cell as a formula; a plain signed number
  // (a Telegram group's chat id, -1001234567890) is only a number, and is kept as it is
  const safe = /^[=+\-@\t\r]/.test(s) && !/^[+-]\d+$/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

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
    ]
      .map(cell)
      .join(','),
  );
  return `${[head.join(','), ...rows].join('\r\n')}\r\n`;
}

export function downloadCsv(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
