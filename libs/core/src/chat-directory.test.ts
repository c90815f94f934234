import { cannotSendReasonOf, foldForSearch } from './chat-directory.js';

describe('foldForSearch', () => {
  it('folds case and accents, so any spelling of a title finds it', () => {
    expect(foldForSearch('Café Ärzte ÉCOLE')).toBe('cafe arzte ecole');
    expect(foldForSearch('ｆｕｌｌ')).toBe('full');
  });
});

describe('cannotSendReasonOf', () => {
  it('marks the entry of a chat the platform says is gone or forbidden', () => {
    expect(cannotSendReasonOf('chat_not_found')).toBe('not_found');
    expect(cannotSendReasonOf('forbidden')).toBe('forbidden');
    expect(cannotSendReasonOf('bot_blocked')).toBe('blocked');
    expect(cannotSendReasonOf('bot_kicked')).toBe('removed');
  });
  it('says nothing of a chat for an error that is not about it', () => {
    expect(cannotSendReasonOf('server_error')).toBeNull();
  });
});
