import { SentMessages } from './sent-messages.js';

describe('SentMessages', () => {
  test('answers by account and message id', () => {
    const sent = new SentMessages();
    sent.remember('a', '3EB0AA', { conversation: 'hello' });
    expect(sent.get('a', '3EB0AA')).toEqual({ conversation: 'hello' });
    expect(sent.get('b', '3EB0AA')).toBeUndefined();
    expect(sent.get('a', '3EB0BB')).toBeUndefined();
  });

  test('keeps the newest messages up to its bound, dropping the oldest first', () => {
    const sent = new SentMessages(3);
    for (const id of ['1', '2', '3']) sent.remember('a', id, { conversation: id });
    // sent again: now the newest
    sent.remember('a', '1', { conversation: '1 again' });
    sent.remember('a', '4', { conversation: '4' });
    expect(sent.get('a', '2')).toBeUndefined();
    expect(sent.get('a', '1')).toEqual({ conversation: '1 again' });
    expect(sent.get('a', '3')).toEqual({ conversation: '3' });
    expect(sent.get('a', '4')).toEqual({ conversation: '4' });
  });
});
