import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableReport, verify, type VerifyOptions } from '../../src/shipped/conformance/index.js';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabase } from '../support/databases.js';
import { undocumentedStatusPlatform } from './broken/undocumentedStatusPlatform.js';
import { failing } from './verdicts.js';
import { HOSTAPP, MINIAPP, referenceHostappRouter, referenceMiniappRouter, serve, type RunningServer } from './reference.js';

const quiet = { port: 0, host: '127.0.0.1', dataDir: 'memory://', databaseUrl: undefined, logLevel: 'silent' };

function platformSettings(url: string): VerifyOptions {
  return {
    subject: 'platform',
    url,
    credentials: MINIAPP,
    hostappCredentials: HOSTAPP,
    tokenPrefix: 'Token',
    signingSecrets: [],
    paths: {},
    e4Method: 'POST',
  };
}

describeOnBackends('conformance of the platform', (backend) => {
  describe('verify platform against Minibridge with the reference partner servers behind it', { timeout: 60_000 }, () => {
    let hostapp: RunningServer;
    let miniapp: RunningServer;
    let platform: RunningPlatform;
    let database: PlatformDatabase | undefined;
    beforeAll(async () => {
      hostapp = await serve(express().use(referenceHostappRouter()));
      miniapp = await serve(express().use(referenceMiniappRouter()));
      const features = { payments: true, event_bridge: true, event_receiver: true };
      const registry = registryFrom({
        hostapps: [
          {
            client_id: HOSTAPP.id,
            secret_key: HOSTAPP.secret,
            features,
            urls: {
              create_order_payment: `${hostapp.url}/create-order-payment`,
              get_payment_status: `${hostapp.url}/get-payment-status`,
              events: `${hostapp.url}/events`,
            },
          },
        ],
        miniapps: [
          {
            app_id: MINIAPP.id,
            secret_key: MINIAPP.secret,
            hostapps: [HOSTAPP.id],
            features,
            urls: { complete_order: `${miniapp.url}/complete-order`, events: `${miniapp.url}/events` },
          },
        ],
      });
      database = await openPlatformDatabase(backend.name);
      platform = await startPlatform({ registry, config: { ...quiet, ...database.config } });
    }, 60_000);
    afterAll(async () => {
      await platform?.close();
      await hostapp?.close();
      await miniapp?.close();
      await database?.dispose();
    });

    it('passes every check of every operation', async () => {
      const report = await verify(platformSettings(platform.url));
      expect(report.passed, tableReport(report)).toBe(true);
      const passed = new Set(
        report.results.filter((result) => result.outcome === 'pass').map((result) => `${result.check} ${result.operationId}`),
      );
      for (const operationId of ['createOrderPayment', 'getPaymentStatus', 'completeOrder', 'sendHostappEvent', 'sendMiniappEvent']) {
        for (const check of ['status', 'content-type', 'schema', 'positive', 'negative', 'auth'])
          expect(passed).toContain(`${check} ${operationId}`);
      }
    });

    it('catches a platform answering an undocumented status, and only that', async () => {
      const proxy = await undocumentedStatusPlatform(platform.url);
      try {
        const report = await verify(platformSettings(proxy.url));
        expect(failing(report)).toEqual(['status createOrderPayment']);
      } finally {
        await proxy.close();
      }
    });
  });
});
