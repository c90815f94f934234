import { Api, helpers } from 'telegram';
import type { UserClient } from './user-client.js';

/** 512 KiB, the largest part Telegram takes. */
const PART_BYTES = 512 * 1024;
const BIG_FILE_BYTES = 10 * 1024 * 1024;

/** Part by part on the account's own connection, not GramJS's uploadFile, which sleeps through flood waits on a second one. */
export async function uploadParts(client: UserClient, name: string, bytes: Buffer): Promise<Api.TypeInputFile> {
  const big = bytes.length > BIG_FILE_BYTES;
  const parts = Math.max(1, Math.ceil(bytes.length / PART_BYTES));
  const fileId = helpers.generateRandomLong(true);
  for (let filePart = 0; filePart < parts; filePart++) {
    const chunk = bytes.subarray(filePart * PART_BYTES, (filePart + 1) * PART_BYTES);
    const request = big
      ? new Api.upload.SaveBigFilePart({ fileId, filePart, fileTotalParts: parts, bytes: chunk })
      : new Api.upload.SaveFilePart({ fileId, filePart, bytes: chunk });
    if ((await client.invoke(request)) !== true) throw new Error(`Telegram did not keep part ${filePart + 1} of ${parts}`);
  }
  return big ? new Api.InputFileBig({ id: fileId, parts, name }) : new Api.InputFile({ id: fileId, parts, name, md5Checksum: '' });
}
