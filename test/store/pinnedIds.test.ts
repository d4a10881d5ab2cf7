import { expect, it } from 'vitest';
import { orderCompletionBody } from '../../src/platform/payments/settlement.js';
import { createStore } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, newOrderPayment, transitionTo } from './fixtures.js';

// The ids the sandbox pins for its request samples (ADR 0043): the pinned row gets its id, every
// other row a random one, and a credential whose pinned id is taken falls back to a random one.

const PINNED_DELIVERY = '0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b';
const PINNED_CREDENTIAL = '5d1f0a4e-2b7c-4e8a-9c3d-6f2a1b0e9d87';

describeEachBackend('pinned ids', (database) => {
  const clock = manualClock();
  const pinned = newOrderPayment();
  const store = () =>
    createStore(database.db, {
      clock: clock.now,
      pinnedIds: {
        delivery: (row) =>
          row.order_payment_id === pinned.order_payment_id && row.payment_status === 'paid' ? PINNED_DELIVERY : undefined,
        credential: (row) => (row.partner_id === 'ha_pinned' && row.origin === 'dashboard' ? PINNED_CREDENTIAL : undefined),
      },
    });

  it("gives the pinned payment's delivery its id, and another payment's a random one", async () => {
    const other = newOrderPayment();
    const opened = store();
    for (const payment of [pinned, other]) await opened.orderPayments.create(payment, null);
    const first = await opened.orderPayments.transition(transitionTo(pinned, 'paid'), orderCompletionBody);
    const second = await opened.orderPayments.transition(transitionTo(other, 'paid'), orderCompletionBody);
    expect(first.outcome === 'applied' && first.delivery.delivery_id).toBe(PINNED_DELIVERY);
    expect(second.outcome === 'applied' && second.delivery.delivery_id).not.toBe(PINNED_DELIVERY);
  });

  it('gives the first pinned credential its id, a second one a random id, and others random ids', async () => {
    const opened = store();
    const row = {
      partner_type: 'hostapp',
      partner_id: 'ha_pinned',
      kind: 'secret_key',
      verifier: 'v',
      sealed: null,
      origin: 'dashboard',
    } as const;
    const first = await opened.partners.insertCredential(database.db, row);
    const second = await opened.partners.insertCredential(database.db, row);
    const imported = await opened.partners.insertCredential(database.db, { ...row, origin: 'import' });
    expect(first.credential_id).toBe(PINNED_CREDENTIAL);
    expect(second.credential_id).not.toBe(PINNED_CREDENTIAL);
    expect(imported.credential_id).not.toBe(PINNED_CREDENTIAL);
    expect(new Set([first, second, imported].map((credential) => credential.credential_id)).size).toBe(3);
  });
});
