/** Bodies the zod schemas do not describe: raw media, CSV members, and nullable bodies that may be left out. */
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

type Operation = {
  operationId?: string;
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: { anyOf?: { type?: unknown }[] } }> };
};

const acceptsNull = (body: Operation['requestBody']) => body?.content?.['application/json']?.schema?.anyOf?.some((s) => s.type === 'null') === true;

export function withRequestBodies<T extends { paths?: unknown }>(document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (acceptsNull(operation.requestBody)) operation.requestBody = { ...operation.requestBody, required: false };
      const extra = operation.operationId === undefined ? undefined : extraRequestBodies[operation.operationId];
      if (!extra) continue;
      const existing = operation.requestBody;
      operation.requestBody = { ...extra, ...existing, content: { ...existing?.content, ...extra.content } };
    }
  }
  return document;
}
