/**
 * The run CSV's columns as the contract fixes their order (docs/CONTRACT.md): written out here,
 * not read from the console's code, so a test comparing against it fails when the file moves one.
 * Added columns go last.
 */
export const RUN_CSV_COLUMNS = [
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
