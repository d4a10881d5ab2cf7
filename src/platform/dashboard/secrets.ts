import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The published development key: what the platform uses without MINIBRIDGE_SECRETS_KEY (the
 * sandbox, tests, a laptop). Anything sealed with it is readable by anyone with this source, so
 * a deployment must set its own key (ADR 0027); the platform logs a warning when it falls back.
 */
export const DEV_SECRETS_KEY = 'bWluaWJyaWRnZS1kZXYtb25seS1OT1QtRk9SLVBST0Q='; // "minibridge-dev-only-NOT-FOR-PROD" (32 bytes)

/**
 * Secrets at rest (ADR 0027). One 32-byte key from MINIBRIDGE_SECRETS_KEY gives, through HKDF,
 * an AES-256-GCM key for secrets the platform must present (sealed, readable by the platform
 * only) and an HMAC-SHA256 pepper for verifiers of secrets partners present. A verifier is
 * one HMAC: cheap enough for every request, and since every issued secret is 32 random bytes
 * there is nothing for a slow hash (scrypt) to protect against, while without the pepper a
 * leaked table cannot even test a guess.
 */
export class SecretBox {
  private readonly sealKey: Buffer;
  private readonly previousSealKey: Buffer | undefined;
  private readonly pepper: Buffer;
  /** Names the key (MINIBRIDGE_SECRETS_KEY) without revealing it. */
  readonly keyId: string;

  /**
   * `pepper`: the verifier key kept in the database (ADR 0038); by default the one derived from
   * `keyBase64`, as before any rotation. `previousKeyBase64`: during a rotation of the key, what
   * was sealed under the previous one still opens.
   */
  constructor(keyBase64: string, options: { previousKeyBase64?: string; pepper?: Buffer } = {}) {
    const key = keyBytes(keyBase64);
    this.sealKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'minibridge seal v1', 32));
    this.pepper = options.pepper ?? derivedPepper(keyBase64);
    this.keyId = keyIdOf(keyBase64);
    this.previousSealKey =
      options.previousKeyBase64 === undefined
        ? undefined
        : Buffer.from(hkdfSync('sha256', keyBytes(options.previousKeyBase64), Buffer.alloc(0), 'minibridge seal v1', 32));
  }

  /** The verifier pepper, sealed under this key, as the database keeps it. */
  sealedPepper(): string {
    return this.seal(this.pepper.toString('base64url'), PEPPER_BINDING);
  }

  /** Whether `sealed` was sealed under the current key (false: under the previous one, or unreadable). */
  sealedUnderCurrentKey(sealed: string, boundTo: string): boolean {
    try {
      openWith(this.sealKey, sealed, boundTo);
      return true;
    } catch {
      return false;
    }
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url; the associated data binds it to its credential. */
  seal(secret: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ciphertext]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** Opens what this key sealed, or during a rotation what the previous key sealed. */
  open(sealed: string, boundTo: string): string {
    try {
      return openWith(this.sealKey, sealed, boundTo);
    } catch (error) {
      if (!this.previousSealKey) throw error;
      return openWith(this.previousSealKey, sealed, boundTo);
    }
  }

  verifier(secret: string): string {
    return this.verifierBytes(secret).toString('base64url');
  }

  private verifierBytes(secret: string): Buffer {
    return createHmac('sha256', this.pepper).update(secret, 'utf8').digest();
  }

  /**
   * Whether `secret` is the one behind any of `verifiers`; every comparison runs, and never fewer
   * than two (the most a partner has active of a kind), so the time taken says nothing about
   * how many a partner has, or whether there is a partner at all (no verifiers: the decoy check).
   */
  matches(secret: string, verifiers: readonly string[]): boolean {
    return this.matchesDecoded(secret, verifiers.map(decodedVerifier));
  }

  /**
   * `matches` against fixed `verifiers`, decoded once: a partner's secret is checked on every
   * request, so only the presented secret's verifier is made per call.
   */
  matcher(verifiers: readonly string[]): (secret: string) => boolean {
    const decoded = verifiers.map(decodedVerifier);
    return (secret) => this.matchesDecoded(secret, decoded);
  }

  /** `matches` with the verifiers as bytes. */
  matchesDecoded(secret: string, verifiers: readonly Buffer[]): boolean {
    const presented = this.verifierBytes(secret);
    let found = false;
    const compared = verifiers.length >= 2 ? verifiers : [...verifiers, ...DECOY_VERIFIERS].slice(0, 2);
    for (let index = 0; index < compared.length; index++) {
      const expected = compared[index]!;
      if (expected.length === presented.length && timingSafeEqual(expected, presented) && index < verifiers.length) found = true;
    }
    return found;
  }
}

function decodedVerifier(verifier: string): Buffer {
  return Buffer.from(verifier, 'base64url');
}

/** What the sealed pepper is bound to (the associated data of its sealing). */
export const PEPPER_BINDING = 'minibridge verifier pepper';

function keyBytes(keyBase64: string): Buffer {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('MINIBRIDGE_SECRETS_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  return key;
}

/** The pepper a key gives before any rotation (ADR 0027): what databases sealed before ADR 0038 use. */
export function derivedPepper(keyBase64: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keyBytes(keyBase64), Buffer.alloc(0), 'minibridge verifier v1', 32));
}

/** A key's name: 8 bytes of HKDF, hex; says which key sealed the secrets, and nothing about the key. */
export function keyIdOf(keyBase64: string): string {
  return Buffer.from(hkdfSync('sha256', keyBytes(keyBase64), Buffer.alloc(0), 'minibridge key id v1', 8)).toString('hex');
}

function openWith(sealKey: Buffer, sealed: string, boundTo: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('sealed secret has an unknown form');
  const decipher = createDecipheriv('aes-256-gcm', sealKey, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** Compared against to pad a check to two verifiers; 32 bytes, the length of a real verifier, matching nothing. */
const DECOY_VERIFIERS = [Buffer.alloc(32, 0), Buffer.alloc(32, 0)];

/** A new `secret_key`: 32 random bytes, URL-safe base64 (43 characters). */
export function newSecretKey(): string {
  return randomBytes(32).toString('base64url');
}

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
