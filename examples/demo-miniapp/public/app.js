// The demo miniapp page: order → pay (E9) → result, and custom events. The miniapp's secret never
// reaches this page: its server (server.ts) calls the platform.
import { MinibridgeWebAppCustomEvent, pay, sendPromise, subscribe } from './minibridge-sdk.js';

const $ = (id) => document.getElementById(id);
const POLL_EVERY_MS = 1000;
const POLL_ATTEMPTS = 30;

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = message === '';
}

async function api(path, init) {
  const response = await fetch(path, init);
  const body = await response.json();
  if (!response.ok) throw new Error(body.platform?.error_message ?? body.error ?? `HTTP ${response.status}`);
  return body;
}

async function loadProducts() {
  const { products } = await api('/api/catalogue');
  $('products').replaceChildren(
    ...products.map((product) => {
      const item = document.createElement('li');
      const label = document.createElement('span');
      label.innerHTML = '<strong></strong><br><span class="price"></span>';
      label.querySelector('strong').textContent = product.name;
      label.querySelector('.price').textContent = `${product.amount} ${product.currency}`;
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = 'Buy';
      button.dataset.sku = product.sku;
      button.addEventListener('click', () => buy(product.sku, button));
      item.append(label, button);
      return item;
    }),
  );
}

async function buy(sku, button) {
  showError('');
  button.disabled = true;
  try {
    // 1. The server creates the order and the order payment (E1) and hands back order_payment_id.
    const order = await api('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sku }),
    });
    // 2. The host app shows its payment sheet; the promise settles when the user is done.
    const { status } = await pay({
      amount: order.amount,
      currency: order.currency,
      miniappOrderId: order.miniapp_order_id,
      orderPaymentId: order.order_payment_id,
      extraParams: { sku: order.sku },
    });
    await showResult(order, status);
  } catch (error) {
    showError(`${error.code ? `${error.code}: ` : ''}${error.message}`);
  } finally {
    button.disabled = false;
  }
}

const HEADLINES = { success: 'Thank you! Payment confirmed.', cancelled: 'Payment cancelled.', failed: 'Payment failed.' };

/** 3. The result page: the SDK status at once, then the server's payment_status (E6, or E2 while in process). */
async function showResult(order, sdkStatus) {
  $('shop').hidden = true;
  $('result').hidden = false;
  $('result-headline').textContent = HEADLINES[sdkStatus];
  $('result-order').textContent = order.miniapp_order_id;
  $('result-amount').textContent = `${order.amount} ${order.currency}`;
  $('result-sdk-status').textContent = sdkStatus;
  setPaymentStatus({ payment_status: 'in_process', status_source: '', e6_received: false });
  for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt += 1) {
    const current = await api(`/api/orders/${encodeURIComponent(order.miniapp_order_id)}`);
    setPaymentStatus(current);
    if (current.payment_status !== 'in_process' && current.e6_received) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
}

function setPaymentStatus(order) {
  const status = $('result-payment-status');
  status.textContent = order.payment_status + (order.payment_fail_reason ? ` (${order.payment_fail_reason})` : '');
  status.dataset.status = order.payment_status;
  $('result-source').textContent = order.status_source;
  $('result-e6').textContent = order.e6_received ? 'yes' : 'not yet';
}

$('back').addEventListener('click', () => {
  $('result').hidden = true;
  $('shop').hidden = false;
});

$('event-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  $('event-result').textContent = 'waiting for the host app…';
  try {
    const result = await sendPromise(
      MinibridgeWebAppCustomEvent,
      { type: $('event-type').value, payload: { sentAt: new Date().toISOString() } },
      { timeoutMs: Number($('event-timeout').value) },
    );
    $('event-result').textContent = `resolved: ${JSON.stringify(result)}`;
  } catch (error) {
    $('event-result').textContent = `rejected: ${error.code}: ${error.message}`;
  }
});

subscribe((event) => {
  if (!event.detail) return;
  const item = document.createElement('li');
  const { type, data } = event.detail;
  item.textContent =
    type === MinibridgeWebAppCustomEvent ? `${data.type}: ${JSON.stringify(data.payload)}` : `${type}: ${JSON.stringify(data)}`;
  $('host-events').append(item);
});

loadProducts().catch((error) => showError(error.message));
