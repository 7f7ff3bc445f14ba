/**
 * Sealing to a public key (ECIES on P-256: an ephemeral ECDH key, HKDF-SHA256, AES-256-GCM). The keyring's
 * signing keys and subject secret are sealed to the stage's sealing key, whose private half only KMS can
 * open: whoever adds a key (the rotation function, the admin CLI) needs the public half alone, and only a
 * function holding `kms:Decrypt` can ever read what was sealed.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';

const VERSION = 'p256-aes256gcm-v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A fresh P-256 key pair for ECDH: the stage's sealing key. */
export function generateSealingKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

function contentKey(shared: Buffer, ephemeralSpki: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, ephemeralSpki, `${VERSION}|${label}`, 32));
}

/**
 * `plaintext` sealed to `recipient`, bound to `label` (what the bytes are, e.g. `signing-key|<kid>`): a
 * sealed value opened under another label fails, so no entry can be swapped for another.
 */
export function seal(recipient: KeyObject, plaintext: Buffer, label: string): string {
  const ephemeral = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ephemeralSpki = ephemeral.publicKey.export({ format: 'der', type: 'spki' });
  const key = contentKey(
    diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient }),
    ephemeralSpki,
    label,
  );
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(label, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [VERSION, ephemeralSpki, iv, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/** Opens what `seal` sealed under `label`; throws when the key, the label or any byte differs. */
export function open(recipient: KeyObject, sealed: string, label: string): Buffer {
  const [version, spki, iv, ciphertext, tag, ...rest] = sealed.split('.');
  if (version !== VERSION || !spki || !iv || !ciphertext || !tag || rest.length > 0)
    throw new Error('Not a sealed value of this keyring');
  const ephemeralSpki = Buffer.from(spki, 'base64url');
  const ephemeral = createPublicKey({ key: ephemeralSpki, format: 'der', type: 'spki' });
  const key = contentKey(
    diffieHellman({ privateKey: recipient, publicKey: ephemeral }),
    ephemeralSpki,
    label,
  );
  const authTag = Buffer.from(tag, 'base64url');
  if (authTag.length !== TAG_BYTES) throw new Error('Not a sealed value of this keyring');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(label, 'utf8'));
  decipher.setAuthTag(authTag);
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
}
