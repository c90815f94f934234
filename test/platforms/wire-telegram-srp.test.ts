import { Api, helpers } from 'telegram';
import { computeCheck, computeDigest } from 'telegram/Password.js';
import { passwordAnswer, passwordHash, SRP_PRIME, srpChallenge, srpCheck, srpSecret } from '../helpers/wire-telegram-srp.js';

// The FAKE Telegram's SRP server (two-step verification) against GramJS's own client side,
// computeCheck: the right password's proof is accepted, a wrong password's, a proof made for
// another challenge and a tampered one are refused.

const prove = async (answer: Api.account.Password, password: string) => computeCheck(answer, password);

test("the verifier is GramJS's digest of the password: g^PH2(password) mod p", async () => {
  const secret = srpSecret('hunter2');
  const algo = passwordAnswer(secret, srpChallenge(secret), null).currentAlgo as Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow;
  expect(Buffer.from(algo.p)).toEqual(SRP_PRIME);
  expect(algo.g).toBe(3);
  const digest = await computeDigest(algo, 'hunter2');
  expect(BigInt(`0x${Buffer.from(digest).toString('hex')}`)).toBe(secret.verifier);
  expect(BigInt(`0x${Buffer.from(await computeDigest(algo, 'hunter3')).toString('hex')}`)).not.toBe(secret.verifier);
  expect(passwordHash('hunter2', secret.salt1, secret.salt2)).toHaveLength(32);
});

test("GramJS's proof for the right password is accepted; for a wrong password, another challenge or a changed byte it is refused", async () => {
  const secret = srpSecret('correct horse');
  const challenge = srpChallenge(secret);
  const answer = passwordAnswer(secret, challenge, 'horse');
  expect(answer).toMatchObject({ hasPassword: true, hint: 'horse' });
  expect(helpers.returnBigInt(answer.srpId!.toString()).toString()).toBe(challenge.id.toString());

  const right = await prove(answer, 'correct horse');
  expect(right.srpId.toString()).toBe(challenge.id.toString());
  expect(srpCheck(secret, challenge, Buffer.from(right.A), Buffer.from(right.M1))).toBe(true);

  const wrong = await prove(answer, 'correct hors');
  expect(srpCheck(secret, challenge, Buffer.from(wrong.A), Buffer.from(wrong.M1))).toBe(false);

  // a proof is good for the challenge it answered only (srp_B and b change with each getPassword)
  const other = srpChallenge(secret);
  expect(srpCheck(secret, other, Buffer.from(right.A), Buffer.from(right.M1))).toBe(false);

  const tampered = Buffer.from(right.M1);
  tampered[0]! ^= 1;
  expect(srpCheck(secret, challenge, Buffer.from(right.A), tampered)).toBe(false);
  // A outside (1, p - 1) is refused before any proof is looked at
  expect(srpCheck(secret, challenge, Buffer.from([1]), Buffer.from(right.M1))).toBe(false);
}, 20_000);

test('no password: account.Password says none, with a new algorithm to set one', () => {
  const answer = passwordAnswer(null, null, null);
  expect(answer.hasPassword).toBe(false);
  expect(answer.currentAlgo).toBeUndefined();
  expect(answer.newAlgo).toBeInstanceOf(Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow);
});
