/**
 * Provider tokens at rest: sealed with AES-256-GCM under a key from the environment (SECRETS_KEYS,
 * `id:base64key,…`: the first seals, every one opens, so keys rotate by putting a new one first and
 * resealing, `leadgate secrets rotate`). A sealed value is `v1.<key id>.<iv>.<tag>.<ciphertext>`
 * (base64url), bound to what it belongs to (the additional data: the connection and the field), so a
 * sealed token copied onto another row or field does not open. Never logged, never returned.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export interface SecretKey {
  id: string;
  key: Buffer;
}

/** The keys that seal and open: the first seals. */
export class SecretBox {
  constructor(readonly keys: readonly SecretKey[]) {
    if (keys.length === 0) throw new Error('a secret box needs a key');
  }

  get current(): SecretKey {
    return this.keys[0] as SecretKey;
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url'));
    return ['v1', this.current.id, ...parts].join('.');
  }

  open(sealed: string, boundTo: string): string {
    const [version, id, iv, tag, body] = sealed.split('.');
    const key = this.keys.find((k) => k.id === id);
    if (version !== 'v1' || !key || !iv || !tag || body === undefined)
      throw new Error(`a sealed secret under an unknown key (${id ?? '?'}): put the key back in SECRETS_KEYS`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a sealed value is under the current key (else `leadgate secrets rotate` reseals it). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.current.id;
  }
}

/** SECRETS_KEYS as keys: `id:base64` pairs, each key 32 bytes. */
export function parseSecretKeys(text: string): SecretKey[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.indexOf(':');
      const id = part.slice(0, at);
      const key = Buffer.from(part.slice(at + 1), 'base64');
      if (at <= 0 || !/^[A-Za-z0-9_-]{1,32}$/.test(id))
        throw new Error('SECRETS_KEYS: each key is "id:base64", the id of letters, digits, - and _');
      if (key.length !== 32) throw new Error(`SECRETS_KEYS: key ${id} must be 32 bytes (base64 of 32 random bytes)`);
      return { id, key };
    });
}

/**
 * The key of an installation without SECRETS_KEYS (the embedded database of a laptop): derived from the
 * installation's own secret, which lives in the same database, so it protects less; a deployment on
 * its own database sets SECRETS_KEYS (docs/destinations.md).
 */
export function installationKey(installationSecret: Buffer): SecretKey {
  const key = Buffer.from(hkdfSync('sha256', installationSecret, Buffer.alloc(0), 'leadgate provider tokens', 32));
  return { id: 'installation', key };
}
