/**
 * The bodies the routes read themselves, outside the zod schemas the document is built from:
 * a media upload is the raw file (any media type), and audience members also come as CSV.
 * Added to the document by operationId, so clients and validating proxies know them.
 */
const membersCsv = {
  type: 'string',
  description: 'a header row with a chatId column and one column per variable, then one member a row',
};

const extraRequestBodies: Record<string, { required: boolean; description?: string; content: Record<string, { schema: object }> }> = {
  uploadMedia: {
    required: true,
    description: 'the file itself; its Content-Type is its media type (e.g. image/png)',
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  },
  addAudienceMembers: { required: true, content: { 'text/csv': { schema: membersCsv } } },
};

type Operation = { operationId?: string; requestBody?: { required?: boolean; description?: string; content?: Record<string, unknown> } };

/** The document with the raw and CSV request bodies added to their operations. */
export function withRawBodies<T extends { paths?: unknown }>(document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const extra = operation.operationId === undefined ? undefined : extraRequestBodies[operation.operationId];
      if (!extra) continue;
      const existing = operation.requestBody;
      operation.requestBody = { ...extra, ...existing, content: { ...existing?.content, ...extra.content } };
    }
  }
  return document;
}
