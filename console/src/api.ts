// The console's only way to the data: the /v1 API with the bearer token, typed from the
// OpenAPI document (api-types.ts is generated from /openapi.json).
import createClient from 'openapi-fetch';
import type { components, paths } from './api-types.js';

type Json200<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer T } } } }
  ? T
  : never;

export type Run = components['schemas']['Run'];
export type RunStatus = Run['status'];
export type RunTarget = components['schemas']['RunTarget'];
export type TargetStatus = RunTarget['status'];
export type Waiting = NonNullable<Run['waiting']>;
export type Campaign = components['schemas']['Campaign'];
export type Account = components['schemas']['Account'];
export type AccountDefaults = components['schemas']['AccountDefaults'];
export type Media = components['schemas']['Media'];
export type Occurrence = components['schemas']['Occurrence'];
export type CampaignPreview = components['schemas']['CampaignPreview'];
export type PreviewMessage = components['schemas']['PreviewMessage'];
export type PreviewSpan = components['schemas']['PreviewSpan'];
export type CampaignReach = components['schemas']['CampaignReach'];
export type CampaignChat = components['schemas']['CampaignChat'];
export type Tenant = Json200<'/v1/tenants', 'get'>['items'][number];
export type CampaignBody = paths['/v1/campaigns']['post']['requestBody']['content']['application/json'];
export type CampaignPatch = NonNullable<paths['/v1/campaigns/{id}']['patch']['requestBody']>['content']['application/json'];
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
export type Me = Json200<'/v1/me', 'get'>;
export type Pairing = Json200<'/v1/accounts/{id}/pair', 'post'>;
export type WhatsAppSession = components['schemas']['WhatsAppSessionInput'];
export type SessionImported = Json200<'/v1/accounts/{id}/session', 'post'>;
export type TelegramSignIn = Json200<'/v1/accounts/{id}/telegram-sign-in', 'get'>;
export type AccountBody = paths['/v1/accounts']['post']['requestBody']['content']['application/json'];
type AccountPatch = NonNullable<paths['/v1/accounts/{id}']['patch']['requestBody']>['content']['application/json'];
type AudienceBody = paths['/v1/audiences']['post']['requestBody']['content']['application/json'];
type AudiencePatch = NonNullable<paths['/v1/audiences/{id}']['patch']['requestBody']>['content']['application/json'];
type TestSendBody = paths['/v1/campaigns/{id}/test-sends']['post']['requestBody']['content']['application/json'];
export type Platform = Account['platform'];

export type DirectoryChat = components['schemas']['DirectoryChat'];
export type ChatKind = DirectoryChat['kind'];
export type DirectoryState = components['schemas']['DirectoryState'];
export type Audience = components['schemas']['Audience'];
export type AudienceMember = components['schemas']['AudienceMember'];
export type MembersImport = components['schemas']['MembersAdded'];

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

// Every path, parameter, body and answer below is checked by the compiler against `paths`.
// The bearer token is the session's unless a call gives its own (sign-in checks one first).
const client = createClient<paths>({ baseUrl: globalThis.location?.origin ?? '' });
client.use({
  onRequest: ({ request }) => {
    if (!request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${session.token() ?? ''}`);
    return request;
  },
  onResponse: ({ response }) => {
    if (response.status === 401) onUnauthorized();
    return response;
  },
});

type ErrorBody = { error?: { code?: string; message?: string; details?: FieldError[] } };

/** The answer's body, or an ApiError with the API's code, message and field details. */
async function ok<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) {
    const body = (typeof error === 'object' && error !== null ? error : {}) as ErrorBody;
    throw new ApiError(response.status, body.error?.code ?? 'error', body.error?.message ?? `${response.status}`, body.error?.details ?? []);
  }
  return data as T;
}

/** A query without the filters left empty ('' in a form means "any"). */
const given = <T extends object>(params: T) =>
  Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')) as { [K in keyof T]?: Exclude<T[K], ''> };

const byId = (id: string) => ({ path: { id } });
const raw = <T>(body: T) => body;
const commandPaths = {
  pause: '/v1/runs/{id}/pause',
  resume: '/v1/runs/{id}/resume',
  cancel: '/v1/runs/{id}/cancel',
  'retry-failed': '/v1/runs/{id}/retry-failed',
} as const;

export const api = {
  me: (token?: string) => ok(client.GET('/v1/me', token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })),
  runs: (p: { status?: RunStatus | ''; campaignId?: string; accountId?: string; tenantId?: string; limit?: number; cursor?: string }) =>
    ok(client.GET('/v1/runs', { params: { query: given(p) } })),
  run: (id: string) => ok(client.GET('/v1/runs/{id}', { params: byId(id) })),
  targets: (
    id: string,
    p: { status?: TargetStatus | ''; delivered?: 'true' | 'false'; read?: 'true' | 'false'; replied?: 'true' | 'false'; limit?: number; cursor?: string },
  ) => ok(client.GET('/v1/runs/{id}/targets', { params: { ...byId(id), query: given(p) } })),
  command: (id: string, command: RunCommand) => ok(client.POST(commandPaths[command], { params: byId(id) })),
  campaigns: (p: { limit?: number; cursor?: string } = {}) => ok(client.GET('/v1/campaigns', { params: { query: p } })),
  campaign: (id: string) => ok(client.GET('/v1/campaigns/{id}', { params: byId(id) })),
  runNow: (id: string) => ok(client.POST('/v1/campaigns/{id}/runs', { params: byId(id) })),
  tenants: (p: { limit?: number; cursor?: string } = {}) => ok(client.GET('/v1/tenants', { params: { query: p } })),
  /** `ifActive`: for a deactivated campaign, the runs an activation now would give */
  occurrences: (id: string, limit = 5, ifActive = false) =>
    ok(client.GET('/v1/campaigns/{id}/occurrences', { params: { ...byId(id), query: { limit, ...(ifActive && { ifActive: 'true' as const }) } } })),
  reach: (id: string) => ok(client.GET('/v1/campaigns/{id}/reach', { params: byId(id) })),
  /** `as`: the chat the preview's message is rendered for (default: the first target, else audience member) */
  previewCampaign: (body: CampaignBody, as: { chatId: string; threadId?: number } | null = null) =>
    ok(client.POST('/v1/campaigns/preview', { params: { query: as ? given({ chatId: as.chatId, threadId: as.threadId }) : {} }, body })),
  createCampaign: (body: CampaignBody) => ok(client.POST('/v1/campaigns', { body })),
  patchCampaign: (id: string, body: CampaignPatch) => ok(client.PATCH('/v1/campaigns/{id}', { params: byId(id), body })),
  media: (p: { limit?: number; cursor?: string } = {}) => ok(client.GET('/v1/media', { params: { query: p } })),
  /** The file is the raw body, its media type the Content-Type. */
  upload: (file: Blob, filename: string, tenantId?: string) =>
    ok(
      client.POST('/v1/media', {
        params: { query: given({ filename, tenantId }) },
        body: file,
        bodySerializer: raw,
        headers: { 'content-type': file.type || 'application/octet-stream' },
      }),
    ),
  deleteCampaign: (id: string) => ok(client.DELETE('/v1/campaigns/{id}', { params: byId(id) })).then(() => null),
  accounts: (p: { limit?: number; cursor?: string } = {}) => ok(client.GET('/v1/accounts', { params: { query: p } })),
  /** What a new account of each platform gets for what its POST leaves out. */
  accountDefaults: () => ok(client.GET('/v1/account-defaults')),
  createAccount: (body: AccountBody) => ok(client.POST('/v1/accounts', { body })),
  patchAccount: (id: string, body: AccountPatch) => ok(client.PATCH('/v1/accounts/{id}', { params: byId(id), body })),
  liftCooling: (id: string) => ok(client.POST('/v1/accounts/{id}/cooling/lift', { params: byId(id) })),
  chats: (id: string, p: { query?: string; kind?: ChatKind | ''; canSend?: 'true' | 'false' | ''; limit?: number; cursor?: string }) =>
    ok(client.GET('/v1/accounts/{id}/chats', { params: { ...byId(id), query: given(p) } })),
  syncChats: (id: string) => ok(client.POST('/v1/accounts/{id}/chats/sync', { params: byId(id) })),
  audiences: (p: { limit?: number; cursor?: string } = {}) => ok(client.GET('/v1/audiences', { params: { query: p } })),
  audience: (id: string) => ok(client.GET('/v1/audiences/{id}', { params: byId(id) })),
  createAudience: (body: AudienceBody) => ok(client.POST('/v1/audiences', { body })),
  patchAudience: (id: string, body: AudiencePatch) => ok(client.PATCH('/v1/audiences/{id}', { params: byId(id), body })),
  deleteAudience: (id: string) => ok(client.DELETE('/v1/audiences/{id}', { params: byId(id) })).then(() => null),
  members: (id: string, p: { query?: string; limit?: number; cursor?: string }) =>
    ok(client.GET('/v1/audiences/{id}/members', { params: { ...byId(id), query: given(p) } })),
  importMembers: (id: string, csv: string, dryRun: boolean) =>
    ok(
      client.POST('/v1/audiences/{id}/members', {
        params: { ...byId(id), query: { dryRun: dryRun ? 'true' : 'false' } },
        body: csv,
        bodySerializer: raw,
        headers: { 'content-type': 'text/csv' },
      }),
    ),
  removeMembers: (id: string, chatIds: string[]) => ok(client.DELETE('/v1/audiences/{id}/members', { params: byId(id), body: { chatIds } })),
  exportMembers: (id: string) => ok(client.GET('/v1/audiences/{id}/members.csv', { params: byId(id), parseAs: 'text' })),
  campaignChats: (id: string, p: { query?: string; limit?: number; cursor?: string }) =>
    ok(client.GET('/v1/campaigns/{id}/chats', { params: { ...byId(id), query: given(p) } })),
  testSend: (campaignId: string, body: TestSendBody) => ok(client.POST('/v1/campaigns/{id}/test-sends', { params: byId(campaignId), body })),
  telegramSignIn: (id: string) => ok(client.GET('/v1/accounts/{id}/telegram-sign-in', { params: byId(id) })),
  telegramSendCode: (id: string, phone: string) => ok(client.POST('/v1/accounts/{id}/telegram-sign-in', { params: byId(id), body: { phone } })),
  telegramQr: (id: string) => ok(client.POST('/v1/accounts/{id}/telegram-sign-in/qr', { params: byId(id) })),
  telegramCode: (id: string, code: string) => ok(client.POST('/v1/accounts/{id}/telegram-sign-in/code', { params: byId(id), body: { code } })),
  telegramPassword: (id: string, password: string) => ok(client.POST('/v1/accounts/{id}/telegram-sign-in/password', { params: byId(id), body: { password } })),
  pair: (id: string, phoneNumber?: string) => ok(client.POST('/v1/accounts/{id}/pair', { params: byId(id), body: phoneNumber ? { phoneNumber } : {} })),
  importSession: (id: string, body: WhatsAppSession) => ok(client.POST('/v1/accounts/{id}/session', { params: byId(id), body })),
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
