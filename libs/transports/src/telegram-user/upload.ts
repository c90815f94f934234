import { Api, helpers } from 'telegram';
import type { UserClient } from './user-client.js';

/** Telegram's part size for uploads (512 KiB, the largest it takes) and the size past which a file is "big". */
const PART_BYTES = 512 * 1024;
const BIG_FILE_BYTES = 10 * 1024 * 1024;

/**
 * Uploads a file part by part through the account's own connection (upload.saveFilePart, or
 * saveBigFilePart past 10 MiB). Written here rather than GramJS's uploadFile, which sleeps
 * through flood waits itself on a second connection: here every FLOOD_WAIT reaches the
 * sender's pace like any other request's, and the upload goes on one connection per account.
 */
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
