import { describe, expect, it } from 'vitest';
import { generateSealingKeyPair, open, seal } from '#lib/adapters/signing/sealed-box';

describe('sealing to the keyring’s sealing key', () => {
  const recipient = generateSealingKeyPair();

  it('opens what was sealed, under the same label, with the private half', () => {
    const sealed = seal(recipient.publicKey, Buffer.from('secret bytes'), 'signing-key|k1');
    expect(sealed).not.toContain(Buffer.from('secret bytes').toString('base64url'));
    expect(open(recipient.privateKey, sealed, 'signing-key|k1').toString()).toBe('secret bytes');
  });

  it('refuses another label, another key, or a changed byte', () => {
    const sealed = seal(recipient.publicKey, Buffer.from('secret bytes'), 'signing-key|k1');
    expect(() => open(recipient.privateKey, sealed, 'signing-key|k2')).toThrow();
    expect(() => open(generateSealingKeyPair().privateKey, sealed, 'signing-key|k1')).toThrow();
    const parts = sealed.split('.');
    const ciphertext = Buffer.from(parts[3] ?? '', 'base64url');
    ciphertext[0] = (ciphertext[0] ?? 0) ^ 1;
    parts[3] = ciphertext.toString('base64url');
    expect(() => open(recipient.privateKey, parts.join('.'), 'signing-key|k1')).toThrow();
  });
});
