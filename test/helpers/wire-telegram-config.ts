// What the FAKE Telegram on the wire (wire-telegram-mtproto.ts) answers to help.getConfig: every
// data centre of the server at its loopback address, port 80 (GramJS's getDC reads dc_options
// for a DC switch), and the usual limits of Telegram's production config.
import { Api } from 'telegram';

export function serverConfig(dcs: Map<number, { ip: string }>, thisDc: number): Api.Config {
  const now = Math.floor(Date.now() / 1000);
  return new Api.Config({
    date: now,
    expires: now + 3600,
    testMode: false,
    thisDc,
    dcOptions: [...dcs.entries()].map(([id, dc]) => new Api.DcOption({ id, ipAddress: dc.ip, port: 80 })),
    dcTxtDomainName: '',
    chatSizeMax: 200,
    megagroupSizeMax: 200_000,
    forwardedCountMax: 100,
    onlineUpdatePeriodMs: 210_000,
    offlineBlurTimeoutMs: 5_000,
    offlineIdleTimeoutMs: 30_000,
    onlineCloudTimeoutMs: 300_000,
    notifyCloudDelayMs: 30_000,
    notifyDefaultDelayMs: 1_500,
    pushChatPeriodMs: 60_000,
    pushChatLimit: 2,
    editTimeLimit: 172_800,
    revokeTimeLimit: 2_147_483_647,
    revokePmTimeLimit: 2_147_483_647,
    ratingEDecay: 2_419_200,
    stickersRecentLimit: 200,
    channelsReadMediaPeriod: 604_800,
    callReceiveTimeoutMs: 20_000,
    callRingTimeoutMs: 90_000,
    callConnectTimeoutMs: 30_000,
    callPacketTimeoutMs: 10_000,
    meUrlPrefix: 'https://t.me/',
    captionLengthMax: 1024,
    messageLengthMax: 4096,
    webfileDcId: [...dcs.keys()][0]!,
  });
}
