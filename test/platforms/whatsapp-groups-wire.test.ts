import { eventually } from '../helpers/test-env.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile } from './wire-setup.js';

// Groups where only admins may post (WhatsApp's announcement mode), as the real Baileys socket
// reads their metadata from a FAKE WhatsApp Web server of this project's own
// (test/helpers/wire-whatsapp-server.ts): the account writes to one only when it is an admin;
// otherwise the target fails before the write, with its reason.

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});
const wire = wirePoolForFile('groups_wire', () => ({ url: server.url }));

test('an announce-only group is not written to unless the account is one of its admins; an open group is', async () => {
  const me = '601860000@s.whatsapp.net';
  const members = [me, '60186000101@s.whatsapp.net'];
  server.groups.set('120363000000000201@g.us', members);
  server.groups.set('120363000000000202@g.us', members);
  server.announce.set('120363000000000202@g.us', ['60186000101@s.whatsapp.net']);
  server.groups.set('120363000000000203@g.us', members);
  server.announce.set('120363000000000203@g.us', [me]);
  const account = await wire.account('601860000');

  expect(await wire.sendText(account, '120363000000000202@g.us')).toMatchObject({ kind: 'rejected', code: 'announce_only' });
  expect(await wire.sendText(account, '120363000000000203@g.us')).toMatchObject({ kind: 'delivered' });
  expect(await wire.sendText(account, '120363000000000201@g.us')).toMatchObject({ kind: 'delivered' });
  // the send resolves once Baileys wrote the frame; the server (in this process) reads it a moment later
  await eventually('the last message at the server', async () => server.messages.some((m) => m.to === '120363000000000201@g.us'), 10_000, 10);
  expect(server.messages.map((m) => m.to).sort()).toEqual(['120363000000000201@g.us', '120363000000000203@g.us']);
}, 60_000);
