import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadRegistry, registryFrom, RegistryError } from '../../../src/platform/registry/loadRegistry.js';

const minimal = () => ({
  hostapps: [{ client_id: 'ha_1', secret_key: { env: 'HA_SECRET' }, features: { payments: true } }],
  miniapps: [{ app_id: 'ma_1', secret_key: 'miniapp-secret', hostapps: ['ha_1'], features: { payments: true } }],
});

test('defaults are filled and secrets come from the environment', () => {
  const registry = registryFrom(minimal(), { HA_SECRET: 'from-the-env' });
  const hostapp = registry.hostapp('ha_1')!;
  expect(hostapp.secretKey).toBe('from-the-env');
  expect(hostapp.tokenPrefix).toBe('Token');
  expect(hostapp.registration.payment_status_method).toBe('POST');
  expect(hostapp.features).toEqual({ payments: true, event_bridge: false, event_receiver: false });
  expect(registry.linked(registry.miniapp('ma_1')!, hostapp)).toBe(true);
});

test('secrets never appear when the registry or a partner is serialized', () => {
  const registry = registryFrom(minimal(), { HA_SECRET: 'from-the-env' });
  const text = JSON.stringify({ registry, partner: registry.hostapp('ha_1'), miniapp: registry.miniapp('ma_1') });
  expect(text).not.toContain('from-the-env');
  expect(text).not.toContain('miniapp-secret');
});

test.each([
  ['a missing env secret', minimal(), /HA_SECRET, which is not set/],
  [
    'a schema violation, naming the place',
    { ...minimal(), miniapps: [{ app_id: 'ma_1', secret_key: 'short', hostapps: ['ha_1'], features: {} }] },
    /miniapps\[0\]\.secret_key/,
  ],
  [
    'an unknown host app',
    { ...minimal(), miniapps: [{ app_id: 'ma_1', secret_key: 'miniapp-secret', hostapps: ['ha_x'], features: {} }] },
    /names ha_x, which is not a registered host app/,
  ],
  ['a duplicate id', { ...minimal(), hostapps: [...minimal().hostapps, ...minimal().hostapps] }, /registered twice/],
  [
    'signing enabled without secrets',
    { ...minimal(), hostapps: [{ ...minimal().hostapps[0], signing: { enabled: true } }] },
    /secrets is required/,
  ],
  ['an unknown field', { ...minimal(), extra: 1 }, /extra is not allowed/],
])('refuses %s with a clear error', (_name, raw, message) => {
  const env = String(message).includes('HA_SECRET') ? {} : { HA_SECRET: 'hostapp-secret' };
  expect(() => registryFrom(raw, env)).toThrow(RegistryError);
  expect(() => registryFrom(raw, env)).toThrow(message);
});

test('a file that is not JSON is named in the error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-'));
  const file = join(dir, 'registry.json');
  writeFileSync(file, '{ nope');
  expect(() => loadRegistry(file)).toThrow(new RegExp(`registry ${file}: cannot read it as JSON`));
});

test('the sandbox registry file is valid', () => {
  const path = join(import.meta.dirname, '../../../src/tools/sandbox/registry.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return expect.fail(`missing ${path}`);
  }
  expect(() => registryFrom(raw, {})).not.toThrow();
});

describe('partners moving money without request signing (ADR 0038)', () => {
  test('are named: payments on and no signing secret in force', () => {
    const features = (payments: boolean) => ({ payments, event_bridge: false, event_receiver: false });
    const registry = registryFrom({
      hostapps: [
        {
          client_id: 'ha_plain',
          secret_key: 'secret-key-1',
          token_prefix: 'Token',
          use_access_token: false,
          payment_status_method: 'POST',
          features: features(true),
        },
        {
          client_id: 'ha_signed',
          secret_key: 'secret-key-2',
          token_prefix: 'Token',
          use_access_token: false,
          payment_status_method: 'POST',
          features: features(true),
          signing: { enabled: true, secrets: ['signing-secret-2'] },
        },
      ],
      miniapps: [
        { app_id: 'ma_plain', secret_key: 'secret-key-3', hostapps: [], features: features(true) },
        { app_id: 'ma_events_only', secret_key: 'secret-key-4', hostapps: [], features: features(false) },
        {
          app_id: 'ma_off',
          secret_key: 'secret-key-5',
          hostapps: [],
          features: features(true),
          signing: { enabled: false, secrets: ['signing-secret-5'] },
        },
      ],
    });
    expect(registry.unsignedPaymentPartners()).toEqual(['hostapp:ha_plain', 'miniapp:ma_plain', 'miniapp:ma_off']);
  });
});
