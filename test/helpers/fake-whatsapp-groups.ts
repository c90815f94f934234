import type { WhatsAppSocketEvents } from '@metronome/transports/whatsapp';
import { jidNormalizedUser, WAMessageAddressingMode, type GroupMetadata, type GroupParticipant } from '@whiskeysockets/baileys';

/**
 * The FAKE WhatsApp server's groups as their members see them: which accounts are in each
 * group (and whether as admin), what `groupFetchAllParticipating` answers an account, and the
 * group notifications the server sends, shaped as Baileys turns them into events
 * (Utils/process-message.js and Socket/messages-recv.js of @whiskeysockets/baileys):
 * - a rename or announce switch: `groups.update` `[{id, subject | announce, author}]`;
 * - a member removed: `group-participants.update` `{id, author, participants, action: 'remove'}`,
 *   and a member leaving is the same `remove` with the member as its author;
 * - promote / demote / add: the same event with that action;
 * - a group created with the account: `groups.upsert` `[{...metadata, author}]`.
 * Participants are the objects Baileys parses from the notification (`{id, admin}`, addressed
 * by LID in LID-addressed groups, by phone number otherwise); the account is addressed by its
 * LID alone in LID groups, so only a reader that compares both forms recognises itself.
 */

type Admin = 'admin' | 'superadmin' | null;

interface FakeGroup {
  id: string;
  subject: string;
  announce: boolean;
  addressing: 'lid' | 'pn';
  /** members other than the fake's accounts */
  others: string[];
  /** the fake's accounts in the group */
  members: Map<string, Admin>;
  creation: number;
}

/** The account's open socket, as the groups reach it. */
export interface FakeGroupMember {
  user: { id: string; lid?: string } | undefined;
  serverEvent<E extends keyof WhatsAppSocketEvents>(event: E, arg: WhatsAppSocketEvents[E]): void;
}

const ADMIN_LID = '99000000000001@lid';
const ADMIN_PN = '60190000001@s.whatsapp.net';

export class FakeWhatsAppGroups {
  private readonly groups = new Map<string, FakeGroup>();
  private readonly refusals = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly openMember: (accountId: string) => FakeGroupMember | undefined,
    private readonly now: () => number,
  ) {}

  /** `count` groups with the account in each (titles `Group 1`…, `others` other members each). */
  addMany(accountId: string, count: number, opts: { others?: number; addressing?: 'lid' | 'pn' } = {}): string[] {
    const jids: string[] = [];
    for (let i = 1; i <= count; i++) {
      const jid = `1203630${String(++this.seq).padStart(11, '0')}@g.us`;
      this.join(accountId, jid, { subject: `Group ${i}`, others: opts.others ?? 3, addressing: opts.addressing });
      jids.push(jid);
    }
    return jids;
  }

  /** The account is a member of the group (created with the given settings when new). */
  join(accountId: string, jid: string, opts: { subject?: string; others?: number; announce?: boolean; admin?: boolean; addressing?: 'lid' | 'pn' } = {}): void {
    let g = this.groups.get(jid);
    if (!g) {
      const addressing = opts.addressing ?? 'lid';
      const n = opts.others ?? 3;
      const others = Array.from({ length: n }, (_, i) =>
        addressing === 'lid' ? `${88_000_000_000 + this.seq * 1000 + i}@lid` : `6017${String(this.seq * 1000 + i).padStart(7, '0')}@s.whatsapp.net`,
      );
      g = {
        id: jid,
        subject: opts.subject ?? jid,
        announce: opts.announce ?? false,
        addressing,
        others: [addressing === 'lid' ? ADMIN_LID : ADMIN_PN, ...others],
        members: new Map(),
        creation: Math.floor(this.now() / 1000),
      };
      this.groups.set(jid, g);
    }
    g.members.set(accountId, opts.admin ? 'admin' : null);
  }

  /** The account's next `count` group listings are answered `rate-overlimit` (WhatsApp's "slow down"). */
  refuseListings(accountId: string, count: number): void {
    this.refusals.set(accountId, count);
  }

  /** Whether this listing of the account is refused (one refusal used). */
  takeListingRefusal(accountId: string): boolean {
    const left = this.refusals.get(accountId) ?? 0;
    if (left > 0) this.refusals.set(accountId, left - 1);
    return left > 0;
  }

  has(jid: string): boolean {
    return this.groups.has(jid);
  }

  isMember(accountId: string, jid: string): boolean {
    return this.groups.get(jid)?.members.has(accountId) ?? false;
  }

  /** The group's metadata as the server answers (Socket/groups.js `extractGroupMetadata`). */
  metadata(jid: string): GroupMetadata {
    const g = this.groups.get(jid)!;
    const participants: GroupParticipant[] = [
      ...g.others.map((id, i) => ({ id, admin: i === 0 ? ('superadmin' as const) : null })),
      ...[...g.members].map(([accountId, admin]) => ({ id: this.address(g, this.openMember(accountId)) ?? `${accountId}@lid`, admin })),
    ];
    return {
      id: g.id,
      addressingMode: g.addressing === 'lid' ? WAMessageAddressingMode.LID : WAMessageAddressingMode.PN,
      subject: g.subject,
      subjectTime: g.creation,
      size: participants.length,
      creation: g.creation,
      owner: g.others[0],
      restrict: false,
      announce: g.announce,
      isCommunity: false,
      isCommunityAnnounce: false,
      joinApprovalMode: false,
      memberAddMode: false,
      participants,
    };
  }

  /** What `groupFetchAllParticipating` answers the account: every group it is in, by id. */
  listFor(accountId: string): Record<string, GroupMetadata> {
    const data: Record<string, GroupMetadata> = {};
    for (const g of this.groups.values()) if (g.members.has(accountId)) data[g.id] = this.metadata(g.id);
    return data;
  }

  /** An admin renames the group. */
  rename(jid: string, subject: string): void {
    const g = this.groups.get(jid)!;
    g.subject = subject;
    this.tell(g, 'groups.update', [{ id: jid, subject, author: g.others[0] }]);
  }

  /** An admin switches announce mode (only admins may post) on or off. */
  setAnnounce(jid: string, on: boolean): void {
    const g = this.groups.get(jid)!;
    g.announce = on;
    this.tell(g, 'groups.update', [{ id: jid, announce: on, author: g.others[0] }]);
  }

  /** An admin removes the account from the group. */
  remove(accountId: string, jid: string): void {
    this.participantsChange(jid, accountId, 'remove', false);
  }

  /** The account leaves the group (from the phone). */
  leave(accountId: string, jid: string): void {
    this.participantsChange(jid, accountId, 'remove', true);
  }

  /** An admin adds the account to an existing group (again). */
  addBack(accountId: string, jid: string): void {
    this.join(accountId, jid);
    this.participantsChange(jid, accountId, 'add', false);
  }

  /** An admin makes the account an admin, or no longer one. */
  setAdmin(accountId: string, jid: string, admin: boolean): void {
    this.participantsChange(jid, accountId, admin ? 'promote' : 'demote', false);
  }

  /** Someone creates a group with the account in it. */
  createWith(accountId: string, jid: string, subject: string): void {
    this.join(accountId, jid, { subject });
    const g = this.groups.get(jid)!;
    const member = this.openMember(accountId);
    if (member) member.serverEvent('groups.upsert', [{ ...this.metadata(jid), author: g.others[0] } as GroupMetadata]);
  }

  private participantsChange(jid: string, accountId: string, action: 'add' | 'remove' | 'promote' | 'demote', byItself: boolean): void {
    const g = this.groups.get(jid)!;
    const member = this.openMember(accountId);
    const id = this.address(g, member) ?? `${accountId}@lid`;
    const audience = [...g.members.keys()];
    if (action === 'remove') g.members.delete(accountId);
    else if (action !== 'add') g.members.set(accountId, action === 'promote' ? 'admin' : null);
    const event = { id: jid, author: byItself ? id : g.others[0]!, participants: [{ id, admin: g.members.get(accountId) ?? null }], action };
    // The notification reaches every member, the removed one included.
    for (const a of audience) this.openMember(a)?.serverEvent('group-participants.update', event);
  }

  private tell<E extends keyof WhatsAppSocketEvents>(g: FakeGroup, event: E, arg: WhatsAppSocketEvents[E]): void {
    for (const a of g.members.keys()) this.openMember(a)?.serverEvent(event, arg);
  }

  /** The account as the group addresses it: its LID in LID groups, its phone-number JID otherwise. */
  private address(g: FakeGroup, member: FakeGroupMember | undefined): string | undefined {
    const jid = g.addressing === 'lid' ? member?.user?.lid : member?.user?.id;
    return jid ? jidNormalizedUser(jid) : undefined;
  }
}
