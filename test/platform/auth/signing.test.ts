import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import {
  signingSecretProblem,
  signRequest,
  signatureInput,
  standardSecret,
  replayExpiresAt,
  replayWindowSeconds,
  verifyRequest,
} from '../../../src/wire/signing.js';
import { loadDocument } from '../../../src/contract/documents.js';
import { registryFrom } from '../../../src/platform/registry/loadRegistry.js';

// The worked example of docs/guides/02-authentication.md, so the guide cannot drift from the code.
const SECRET = 'mbsig_2f7c9a41e0d3b865';
const SECOND = 'mbsig_9e15d04a7bc3f268';
const ID = 'msg_2b0c8e1f6a9d4c3e8f7a6b5c4d3e2f10';
const AT = 1795250000;
const BODY = '{"order_payment_id":"hop_20261121_000042","app_id":"ma_7f3c2a","client_id":"ha_superapp","payment_status":"paid"}';
const QUERY = 'app_id=ma_7f3c2a&client_id=ha_superapp&order_payment_id=hop_20261121_000042';

describe("the guide's worked example", () => {
  test('whsec_ forms, signatures in both schemes, rotation and the GET variant', () => {
    expect(standardSecret(SECRET)).toBe('whsec_bWJzaWdfMmY3YzlhNDFlMGQzYjg2NQ==');
    expect(standardSecret(SECOND)).toBe('whsec_bWJzaWdfOWUxNWQwNGE3YmMzZjI2OA==');
    const signed = signRequest(BODY, [SECRET, SECOND], { nowSeconds: AT, messageId: ID });
    expect(signed['webhook-signature']).toBe(
      'v1,pVyhxB1WRnE3gmKmM6xx4NwN7ty5EJaK44R6datvUcA= v1,bkyYyQIEaY+dG6jb8e7MdaNXakleiH3aZvaFtOD/gkc=',
    );
    expect(signed['X-Minibridge-Signature']).toBe(
      'v1=2abd345cb83fe61072eecae51e5351b1b01f6d2d0c777569373be6330938bf81, v1=7b9dc6edc49b4126d8a1ae0316efaa13615edaf51dd4c418f95500ebdccb82ad',
    );
    expect(signRequest(QUERY, [SECRET], { nowSeconds: AT, messageId: ID })['webhook-signature']).toBe(
      'v1,X/fwZJHqor1JaSrCiKoyjUqtRG3qZ74Ipct1NLLIf/k=',
    );
    // The package computes the same value from the whsec_ form.
    expect(new Webhook(standardSecret(SECRET)).sign(ID, new Date(AT * 1000), BODY)).toBe('v1,pVyhxB1WRnE3gmKmM6xx4NwN7ty5EJaK44R6datvUcA=');
  });
});

describe('verification', () => {
  const headers = (values: Record<string, string>) => signatureInput((name) => values[name]);

  test('a whsec_ secret and its registered form verify the same signature', () => {
    const signed = signRequest(BODY, [SECRET], { nowSeconds: AT, messageId: ID });
    const lower = Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.toLowerCase(), value]));
    for (const secret of [SECRET, standardSecret(SECRET)]) {
      expect(
        verifyRequest(
          BODY,
          headers({ 'webhook-id': ID, 'webhook-timestamp': String(AT), 'webhook-signature': lower['webhook-signature']! }),
          [secret],
          AT,
        ),
      ).toMatchObject({ ok: true, scheme: 'standard-webhooks' });
    }
  });

  test('refusals name their reason', () => {
    const signed = signRequest(BODY, [SECRET], { nowSeconds: AT, messageId: ID });
    const good = { 'webhook-id': ID, 'webhook-timestamp': String(AT), 'webhook-signature': signed['webhook-signature'] };
    expect(verifyRequest(BODY, headers({ ...good, 'webhook-id': 'msg.with.dots' }), [SECRET], AT)).toMatchObject({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyRequest(BODY, headers({ ...good, 'webhook-signature': 'v1=abc' }), [SECRET], AT)).toMatchObject({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyRequest(BODY, headers(good), [SECRET], AT + replayWindowSeconds() + 1)).toMatchObject({ ok: false, reason: 'stale' });
    expect(verifyRequest(BODY, headers(good), [SECOND], AT)).toMatchObject({ ok: false, reason: 'mismatch' });
    expect(verifyRequest(BODY, headers({}), [SECRET], AT)).toMatchObject({ ok: false, scheme: 'x-minibridge', reason: 'missing' });
  });

  test('replay keys name the signed message: a rotation’s two signatures, either scheme, any secret, give the keys of the first acceptance', () => {
    const both = signRequest(BODY, [SECRET, SECOND], { nowSeconds: AT, messageId: ID });
    const keysOf = (values: Record<string, string>, secrets: string[]) => {
      const verification = verifyRequest(BODY, headers(values), secrets, AT);
      if (!verification.ok) throw new Error(`expected ${JSON.stringify(values)} to verify`);
      return verification.replayKeys.map((key) => key.digest);
    };
    const lower = (values: object) => Object.fromEntries(Object.entries(values).map(([name, value]) => [name.toLowerCase(), value]));
    const first = keysOf(lower(both), [SECRET, SECOND]);
    expect(first).toHaveLength(2);
    const [standardA, standardB] = both['webhook-signature'].split(' ');
    const [legacyA, legacyB] = both['X-Minibridge-Signature'].split(', ');
    const standard = { 'webhook-id': ID, 'webhook-timestamp': String(AT) };
    const legacy = { 'x-minibridge-timestamp': String(AT) };
    for (const copy of [
      { ...standard, 'webhook-signature': standardB! },
      { ...standard, 'webhook-signature': standardA! },
      { ...legacy, 'x-minibridge-signature': legacyB! },
      { ...legacy, 'x-minibridge-signature': legacyA! },
    ])
      for (const secrets of [[SECRET, SECOND], [SECOND], [SECOND, SECRET]])
        if (verifyRequest(BODY, headers(copy), secrets, AT).ok) expect(first).toContain(keysOf(copy, secrets)[0]);
    // A deprecated signature with a secret the receiver does not hold yet is remembered all the
    // same, so the copy carrying it alone is a replay once that secret becomes active.
    const ahead = signRequest(BODY, [SECOND], { nowSeconds: AT, messageId: ID });
    const accepted = keysOf(
      lower({
        ...signRequest(BODY, [SECRET], { nowSeconds: AT, messageId: ID }),
        'X-Minibridge-Signature': ahead['X-Minibridge-Signature'],
      }),
      [SECRET],
    );
    expect(accepted).toContain(keysOf({ ...legacy, 'x-minibridge-signature': ahead['X-Minibridge-Signature'] }, [SECRET, SECOND])[0]);
  });

  test('a replay key outlives the last millisecond the window admits its timestamp in', () => {
    const signed = signRequest(BODY, [SECRET], { nowSeconds: AT, messageId: ID });
    const good = { 'webhook-id': ID, 'webhook-timestamp': String(AT), 'webhook-signature': signed['webhook-signature'] };
    const lastAdmittedSecond = AT + replayWindowSeconds();
    expect(verifyRequest(BODY, headers(good), [SECRET], lastAdmittedSecond)).toMatchObject({ ok: true });
    expect(verifyRequest(BODY, headers(good), [SECRET], lastAdmittedSecond + 1)).toMatchObject({ ok: false, reason: 'stale' });
    // Admitted through lastAdmittedSecond.999, remembered until (lastAdmittedSecond + 1).000.
    expect(replayExpiresAt(AT)).toBe((lastAdmittedSecond + 1) * 1000);
  });

  test("the replay window is the contract's x-replay-window-seconds", () => {
    const scheme = loadDocument('platform').components.securitySchemes!.requestSignature!;
    expect(replayWindowSeconds()).toBe(scheme['x-replay-window-seconds']);
    // The description Redoc renders names the same number.
    expect(String(scheme.description)).toContain(`\`x-replay-window-seconds\` (${replayWindowSeconds()})`);
  });
});

describe('registered whsec_ secrets', () => {
  test.each([
    [`whsec_${Buffer.alloc(32, 7).toString('base64')}`, undefined],
    [`whsec_${Buffer.alloc(16, 7).toString('base64')}`, /24 to 64 bytes; this one encodes 16/],
    ['whsec_not base64!', /standard base64/],
    ['any-secret-registered-before', undefined],
  ])('%s', (secret, problem) => {
    const found = signingSecretProblem(secret);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  test('the registry refuses a whsec_ secret that is too short, naming where it is', () => {
    const file = {
      hostapps: [],
      miniapps: [
        {
          app_id: 'ma_1',
          secret_key: 'miniapp-secret-1',
          hostapps: [],
          features: { payments: true },
          urls: { complete_order: 'http://127.0.0.1:1/complete-order' },
          signing: { enabled: true, secrets: [`whsec_${Buffer.alloc(16, 7).toString('base64')}`] },
        },
      ],
    };
    expect(() => registryFrom(file as Parameters<typeof registryFrom>[0])).toThrow(
      /miniapps\[0\]\.signing\.secrets\[0\]: a whsec_ secret must encode 24 to 64 bytes/,
    );
  });
});
