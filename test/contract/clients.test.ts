import { describe, expect, it } from 'vitest';
import { parseLossless } from '../../src/contract/json.js';
import { createHostappClient, createPlatformClient, type HostappApi } from '../../src/index.js';

type HostappOrderPayment = HostappApi.components['schemas']['HostappCreateOrderPaymentRequest'];

// The clients must carry money without loss: a body read with parseLossless goes out with the
// exact digits and JSON types it came in with.
describe('contract clients', () => {
  it('serializes request bodies with lossless-json and sends the configured headers', async () => {
    const sent: Request[] = [];
    const client = createHostappClient({
      baseUrl: 'https://hostapp.example',
      headers: { Authorization: 'Token aGE6c2VjcmV0' },
      fetch: async (request) => {
        sent.push(request);
        return new Response('{"order_payment_id":"hop_1"}', { status: 200, headers: { 'Content-Type': 'application/json' } });
      },
    });
    const source = '{"app_id":"ma_1","order":{"amount":12345678901234567.89,"shipping":"12.30","currency":"VND"}}';
    const { data } = await client.POST('/create-order-payment', { body: parseLossless(source) as HostappOrderPayment });

    expect(data).toEqual({ order_payment_id: 'hop_1' });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe('https://hostapp.example/create-order-payment');
    expect(sent[0]?.headers.get('authorization')).toBe('Token aGE6c2VjcmV0');
    expect(await sent[0]?.text()).toBe(source);
  });

  it('lets callers read a response without loss with parseAs text', async () => {
    const body = '{"payment_status":"paid","amount":12345678901234567.89}';
    const client = createPlatformClient({ baseUrl: 'https://minibridge.example', fetch: async () => new Response(body, { status: 200 }) });
    const { data: text } = await client.POST('/api/v1/orders/get-payment-status/', {
      body: { app_id: 'ma_1', client_id: 'ha_1', order_payment_id: 'hop_1' },
      parseAs: 'text',
    });
    expect(text).toBe(body);
    expect(parseLossless(text ?? '')).toEqual(parseLossless(body));
  });
});
