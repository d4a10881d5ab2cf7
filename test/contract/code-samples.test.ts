import { describe, expect, it } from 'vitest';
import { API_NAMES, loadDocument } from '../../src/contract/documents.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { codeSamples, type CodeSample } from '../../scripts/lib/code-samples.js';
import { documentedOperations } from '../../scripts/mock/contract-document.js';
import { sampleIds } from '../../src/tools/sandbox/sampleIds.js';

// The request samples the references show (curl and TypeScript). test/contract/served-samples.test.ts
// runs them, as served, in page order, on a fresh `npm start`; here: each operation has one, and
// they name what the sandbox gives the ids of (ADR 0043).

const samples: CodeSample[] = API_NAMES.flatMap((api) => codeSamples(api, loadLosslessDocument(api)));

describe('request samples in the references', () => {
  it('every operation of the three documents has one', () => {
    const operations = API_NAMES.flatMap((api) => documentedOperations(loadDocument(api)).map((found) => found.operationId)).sort();
    expect(samples.map((sample) => sample.operationId).sort()).toEqual(operations);
  });

  it('the samples name the payment, the delivery and the credential the sandbox pins, and create the partners they name', () => {
    const ids = sampleIds();
    const byId = new Map(samples.map((sample) => [sample.operationId, sample]));
    expect(byId.get('getPaymentStatus')!.curl).toContain(ids.orderPaymentId);
    expect(byId.get('createOrderPayment')!.curl).toContain(`"miniapp_order_id": "${ids.miniappOrderId}"`);
    expect(byId.get('getDelivery')!.request.url).toContain(ids.deliveryId);
    expect(byId.get('revokeCredential')!.request.url).toContain(ids.credentialId);
    // The partner a create sample makes is the one the get and update samples name.
    const created = JSON.parse(byId.get('createHostapp')!.request.body!) as { client_id: string };
    expect(byId.get('getHostapp')!.request.url).toMatch(new RegExp(`/${created.client_id}$`));
    expect(byId.get('updateHostapp')!.request.url).toMatch(new RegExp(`/${created.client_id}$`));
    expect(created.client_id).not.toBe('ha_sandbox');
  });
});
