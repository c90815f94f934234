/** Every script in lua/, by file name: `<name>-<number of KEYS>`. */
export const SCRIPT_FILES = [
  'lock-acquire-1',
  'lock-extend-1',
  'release-1',
  'pace-reserve-3',
  'pace-reserve-many-3',
  'lock-release-settle-3',
  'pace-reserve-safe-6',
  'pace-seed-3',
  'chat-limits-reserve-3',
  'chat-limits-seed-2',
  'chat-limits-seeded-2',
  'lease-hold-1',
  'socket-lease-acquire-3',
  'socket-lease-release-2',
  'socket-lease-renew-2',
  'socket-lease-peek-1',
  'rate-limit-1',
  'rate-limit-2',
] as const;
export type ScriptName = (typeof SCRIPT_FILES)[number];
