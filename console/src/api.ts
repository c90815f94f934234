// The console's only way to the data: the /v1 API with the bearer token, typed from the
// OpenAPI document (api-types.ts is generated from /openapi.json).
import type { components, paths } from './api-types.js';

type Json200<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } } ? T : never;

export type Run = components['schemas']['Run'];
export type RunStatus = Run['status'];
export type RunTarget = components['schemas']['RunTarget'];
export type TargetStatus = RunTarget['status'];
export type Waiting = NonNullable<Run['waiting']>;
export type Campaign = components['schemas']['Campaign'];
export type Account = components['schemas']['Account'];
export type Media = components['schemas']['Media'];
export type Occurrence = components['schemas']['Occurrence'];
export type CampaignPreview = components['schemas']['CampaignPreview'];
export type Tenant = Json200<'/v1/tenants', 'get'>['items'][number];
export type CampaignBody = paths['/v1/campaigns']['post']['requestBody']['content']['application/json'];
export type CampaignPatch = NonNullable<paths['/v1/campaigns/{id}']['patch']['requestBody']>['content']['application/json'];
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export type Me = Json200<'/v1/me', 'get'>;
export type Pairing = Json200<'/v1/accounts/{id}/pair', 'post'>;
export type AccountBody = paths['/v1/accounts']['post']['requestBody']['content']['application/json'];
export type Platform = Account['platform'];

export type DirectoryChat = components['schemas']['DirectoryChat'];
export type ChatKind = DirectoryChat['kind'];
export type DirectoryState = components['schemas']['DirectoryState'];
export type Audience = components['schemas']['Audience'];
export type AudienceMember = components['schemas']['AudienceMember'];
export type MembersImport = components['schemas']['MembersAdded'];
/** Where an audience's members are exported as CSV. */
export const audienceCsvPath = (id: string) => `/v1/audiences/${encodeURIComponent(id)}/members.csv`;

export interface FieldError {
  field: string;
  message: string;
}

const TOKEN_KEY = 'metronome.token';

// The token lives in sessionStorage: it survives a reload of the tab, is gone when the tab
// closes, and never appears in a URL.
export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message);
  }
}

/** Told when the token is refused, so the app returns to the sign-in form. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export async function call<T>(method: string, path: string, body?: unknown, token = session.token(), contentType = 'application/json'): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? ''}` };
  if (body !== undefined) headers['content-type'] = contentType;
  const raw = contentType !== 'application/json';
  const res = await fetch(path, { method, headers, ...(body !== undefined && { body: raw ? (body as string) : JSON.stringify(body) }) });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const error = (json as { error?: { code?: string; message?: string; details?: FieldError[] } } | null)?.error;
    if (res.status === 401) onUnauthorized();
    throw new ApiError(res.status, error?.code ?? 'error', error?.message ?? `${res.status}`, error?.details ?? []);
  }
  return json as T;
}

/** POST /v1/media: the file is the raw body, its media type the Content-Type. */
async function upload(file: Blob, filename: string, tenantId?: string): Promise<Media> {
  const headers = { authorization: `Bearer ${session.token() ?? ''}`, 'content-type': file.type || 'application/octet-stream' };
  const res = await fetch(`/v1/media${query({ filename, tenantId })}`, { method: 'POST', headers, body: file });
  const json = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: FieldError[] } } | null;
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    throw new ApiError(res.status, json?.error?.code ?? 'error', json?.error?.message ?? `${res.status}`, json?.error?.details ?? []);
  }
  return json as Media;
}

const query = (params: Record<string, string | number | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

export const api = {
  me: (token?: string) => call<Me>('GET', '/v1/me', undefined, token ?? session.token()),
  runs: (p: { status?: RunStatus | ''; campaignId?: string; accountId?: string; tenantId?: string; limit?: number; cursor?: string }) => call<Page<Run>>('GET', `/v1/runs${query(p)}`),
  run: (id: string) => call<Run>('GET', `/v1/runs/${encodeURIComponent(id)}`),
  targets: (id: string, p: { status?: TargetStatus | ''; limit?: number; cursor?: string }) =>
    call<Page<RunTarget>>('GET', `/v1/runs/${encodeURIComponent(id)}/targets${query(p)}`),
  command: (id: string, command: RunCommand) => call<Run>('POST', `/v1/runs/${encodeURIComponent(id)}/${command}`),
  campaigns: (p: { limit?: number; cursor?: string } = {}) => call<Page<Campaign>>('GET', `/v1/campaigns${query(p)}`),
  campaign: (id: string) => call<Campaign>('GET', `/v1/campaigns/${encodeURIComponent(id)}`),
  runNow: (id: string) => call<Run>('POST', `/v1/campaigns/${encodeURIComponent(id)}/runs`),
  tenants: (p: { limit?: number; cursor?: string } = {}) => call<Page<Tenant>>('GET', `/v1/tenants${query(p)}`),
  occurrences: (id: string, limit = 5) => call<{ items: Occurrence[] }>('GET', `/v1/campaigns/${encodeURIComponent(id)}/occurrences${query({ limit })}`),
  previewCampaign: (body: CampaignBody) => call<CampaignPreview>('POST', '/v1/campaigns/preview', body),
  createCampaign: (body: CampaignBody) => call<Campaign>('POST', '/v1/campaigns', body),
  patchCampaign: (id: string, body: CampaignPatch) => call<Campaign>('PATCH', `/v1/campaigns/${encodeURIComponent(id)}`, body),
  media: (p: { limit?: number; cursor?: string } = {}) => call<Page<Media>>('GET', `/v1/media${query(p)}`),
  upload: (file: Blob, filename: string, tenantId?: string) => upload(file, filename, tenantId),
  deleteCampaign: (id: string) => call<null>('DELETE', `/v1/campaigns/${encodeURIComponent(id)}`),
  accounts: (p: { limit?: number; cursor?: string } = {}) => call<Page<Account>>('GET', `/v1/accounts${query(p)}`),
  createAccount: (body: AccountBody) => call<Account>('POST', '/v1/accounts', body),
  patchAccount: (id: string, body: Record<string, unknown>) => call<Account>('PATCH', `/v1/accounts/${encodeURIComponent(id)}`, body),
  liftCooling: (id: string) => call<Account>('POST', `/v1/accounts/${encodeURIComponent(id)}/cooling/lift`),
  chats: (id: string, p: { query?: string; kind?: ChatKind | ''; canSend?: 'true' | 'false' | ''; limit?: number; cursor?: string }) =>
    call<Page<DirectoryChat>>('GET', `/v1/accounts/${encodeURIComponent(id)}/chats${query(p)}`),
  syncChats: (id: string) => call<DirectoryState>('POST', `/v1/accounts/${encodeURIComponent(id)}/chats/sync`),
  audiences: (p: { limit?: number; cursor?: string } = {}) => call<Page<Audience>>('GET', `/v1/audiences${query(p)}`),
  audience: (id: string) => call<Audience>('GET', `/v1/audiences/${encodeURIComponent(id)}`),
  createAudience: (body: { name: string; members?: AudienceMember[]; tenantId?: string }) => call<Audience>('POST', '/v1/audiences', body),
  patchAudience: (id: string, body: { name: string }) => call<Audience>('PATCH', `/v1/audiences/${encodeURIComponent(id)}`, body),
  deleteAudience: (id: string) => call<null>('DELETE', `/v1/audiences/${encodeURIComponent(id)}`),
  members: (id: string, p: { query?: string; limit?: number; cursor?: string }) => call<Page<AudienceMember>>('GET', `/v1/audiences/${encodeURIComponent(id)}/members${query(p)}`),
  importMembers: (id: string, csv: string, dryRun: boolean) =>
    call<MembersImport>('POST', `/v1/audiences/${encodeURIComponent(id)}/members${dryRun ? '?dryRun=true' : ''}`, csv, undefined, 'text/csv'),
  removeMembers: (id: string, chatIds: string[]) => call<unknown>('DELETE', `/v1/audiences/${encodeURIComponent(id)}/members`, { chatIds }),
  exportMembers: async (id: string) => {
    const res = await fetch(audienceCsvPath(id), { headers: { authorization: `Bearer ${session.token() ?? ''}` } });
    if (res.status === 401) onUnauthorized();
    if (!res.ok) throw new ApiError(res.status, 'error', `export failed (${res.status})`);
    return res.text();
  },
  testSend: (campaignId: string, body: { chatId: string; asChatId?: string }) => call<Run>('POST', `/v1/campaigns/${encodeURIComponent(campaignId)}/test-sends`, body),
  pair: (id: string, phoneNumber?: string) => call<Pairing>('POST', `/v1/accounts/${encodeURIComponent(id)}/pair`, phoneNumber ? { phoneNumber } : {}),
};

export type RunCommand = 'pause' | 'resume' | 'cancel' | 'retry-failed';

/** Every page of a list, for small lists (names of campaigns and accounts) and the CSV export. */
export async function allPages<T>(load: (cursor: string | undefined) => Promise<Page<T>>, max = 100): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < max; i++) {
    const page = await load(cursor);
    out.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out;
}
