import type { Logger } from 'pino';
import type { Queryable, Store } from '../store/index.js';
import { derivedPepper, keyIdOf, PEPPER_BINDING, SecretBox } from './secrets.js';
import { typeOf } from './settings.js';

/** The key the platform runs with and, while rotating it, the one it replaces (MINIBRIDGE_SECRETS_KEY[_PREVIOUS]). */
export interface SecretsKeys {
  key: string;
  previousKey?: string;
}

/**
 * Opens the partner secrets at start-up (ADR 0038). The database records which key sealed them
 * and keeps the verifier pepper sealed under it. Started with a new MINIBRIDGE_SECRETS_KEY and
 * the old one as MINIBRIDGE_SECRETS_KEY_PREVIOUS, the platform re-seals every secret and the
 * pepper under the new key, in one transaction, audited for every partner it touches and
 * logged; instances starting together take turns. The pepper itself is kept, so verifiers of
 * revoked credentials and import digests stay comparable and a revocation is never forgotten.
 * A key that opens nothing recorded stops the start with a message saying what to set.
 */
export async function openSecretBox(store: Store, keys: SecretsKeys, log: Logger): Promise<SecretBox> {
  const partners = store.partners;
  const current = named('MINIBRIDGE_SECRETS_KEY', () => keyIdOf(keys.key));
  const previous = keys.previousKey === undefined ? undefined : named('MINIBRIDGE_SECRETS_KEY_PREVIOUS', () => keyIdOf(keys.previousKey!));
  return partners.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('minibridge.secrets-key:' || current_schema()))");
    const record = await partners.keyRecord(tx);
    const sealedWith = record?.key_id ?? (await keyOfUnrecordedSecrets(tx, store, keys));
    if (sealedWith !== current && sealedWith !== previous)
      throw new Error(
        `MINIBRIDGE_SECRETS_KEY (key ${current}) did not seal the partner secrets in this database (key ${sealedWith}): ` +
          'to rotate the key, start with the old one as MINIBRIDGE_SECRETS_KEY_PREVIOUS and the new one as MINIBRIDGE_SECRETS_KEY',
      );
    const sealingKey = sealedWith === current ? keys.key : keys.previousKey!;
    const pepper = record
      ? Buffer.from(new SecretBox(sealingKey).open(record.pepper, PEPPER_BINDING), 'base64url')
      : derivedPepper(sealingKey);
    const box = new SecretBox(keys.key, { previousKeyBase64: keys.previousKey, pepper });
    if (!record || sealedWith !== current) await partners.saveKeyRecord(tx, { key_id: current, pepper: box.sealedPepper() });
    // While the previous key is given, anything still sealed under it (an instance still on the
    // old key may have issued a credential meanwhile) is sealed again under the new one.
    if (previous !== undefined) {
      const resealed = new Map<string, string[]>();
      for (const credential of await partners.sealedCredentials(tx)) {
        if (box.sealedUnderCurrentKey(credential.sealed!, credential.credential_id)) continue;
        const secret = box.open(credential.sealed!, credential.credential_id);
        await partners.reseal(tx, credential.credential_id, box.seal(secret, credential.credential_id));
        const owner = `${credential.partner_type}:${credential.partner_id}`;
        resealed.set(owner, [...(resealed.get(owner) ?? []), credential.credential_id]);
      }
      for (const [owner, ids] of resealed) {
        const [kind, id] = owner.split(/:(.*)/s) as ['hostapp' | 'miniapp', string];
        await partners.audit(tx, {
          actor: { type: 'operator', id: null },
          action: 'update',
          partner_type: typeOf(kind),
          partner_id: id,
          changes: ids.slice(0, 40).map((credentialId) => ({
            field: `credential.${credentialId}`,
            before: JSON.stringify(`sealed under secrets key ${previous}`),
            after: JSON.stringify(`sealed under secrets key ${current}`),
          })),
        });
      }
      const count = [...resealed.values()].reduce((sum, ids) => sum + ids.length, 0);
      if (sealedWith !== current || count > 0)
        log.warn(
          { from_key: previous, to_key: current, credentials: count, partners: resealed.size },
          'MINIBRIDGE_SECRETS_KEY rotated: partner secrets re-sealed under the new key; remove MINIBRIDGE_SECRETS_KEY_PREVIOUS once every instance runs with the new key',
        );
    }
    return box;
  });
}

/**
 * Which key sealed a database that has no record yet (sealed before ADR 0038): the current key
 * when it opens a stored secret or nothing is stored, the previous one when that does, otherwise
 * a key id neither matches (stopping the start).
 */
async function keyOfUnrecordedSecrets(tx: Queryable, store: Store, keys: SecretsKeys): Promise<string> {
  const [sample] = await store.partners.sealedCredentials(tx);
  if (!sample) return keyIdOf(keys.key);
  for (const key of [keys.key, keys.previousKey]) {
    if (key !== undefined && new SecretBox(key).sealedUnderCurrentKey(sample.sealed!, sample.credential_id)) return keyIdOf(key);
  }
  return 'unknown';
}

/** A key that is not 32 bytes of base64, reported under the variable it came from. */
function named<T>(variable: string, read: () => T): T {
  try {
    return read();
  } catch {
    throw new Error(`${variable} must be 32 bytes in base64 (openssl rand -base64 32)`);
  }
}
