// The host app's side of the bridge, as a web page: the miniapp runs in the iframe and talks to
// this page through minibridge-host.js, which checks every message against the bridge schema.
import { formatAmount, minorUnits } from './amount.js';
import { createHostBridge, miniappFrameEndpoint, MinibridgeWebAppCustomEvent } from './minibridge-host.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

/** What the sandbox host app's payment_status means to the user (the SDK status). */
const SDK_STATUS = { paid: 'success', failed: 'failed', cancelled: 'cancelled', in_process: 'success' };
const ACTION_STATUS = { confirm: 'success', cancel: 'cancelled', fail: 'failed' };

function log(kind, text, value) {
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = `${new Date().toLocaleTimeString()} ${text} `;
  if (value !== undefined) {
    const code = document.createElement('code');
    code.textContent = JSON.stringify(value);
    item.append(code);
  }
  $('log').prepend(item);
}

/** Asks this page's own host app server to settle the payment; it reports the outcome with E5. */
async function settle(orderPaymentId, action) {
  const response = await fetch(`/sandbox/payments/${encodeURIComponent(orderPaymentId)}/${action}`, { method: 'POST' });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error_message ?? `the sandbox answered HTTP ${response.status}`);
  log(
    'out',
    `host app server: ${action} → payment_status ${body.payment_status}; E5 answer`,
    body.complete_order?.answer ?? body.complete_order,
  );
  return SDK_STATUS[body.payment_status] ?? ACTION_STATUS[action];
}

/** Shows the payment sheet and resolves with the status the user's choice leads to. */
function showPaymentSheet(paymentData) {
  const shown = formatAmount(paymentData.amount, paymentData.currency);
  $('pay-amount').textContent = shown.number;
  $('pay-currency').textContent = shown.currency;
  $('pay-amount-warning').hidden = !shown.excessDigits;
  $('pay-amount-warning').textContent = shown.excessDigits
    ? `${shown.currency} has ${minorUnits(shown.currency)} minor units: a real host app cannot charge this amount as it is.`
    : '';
  $('pay-miniapp-order').textContent = paymentData.miniappOrderId ?? '—';
  $('pay-order-payment').textContent = paymentData.orderPaymentId;
  $('pay-extra').textContent = paymentData.extraParams ? JSON.stringify(paymentData.extraParams) : '—';
  const buttons = ['pay-confirm', 'pay-cancel', 'pay-fail'].map($);
  buttons.forEach((button) => (button.disabled = false));
  $('pay-progress').hidden = true;
  $('pay-sheet').hidden = false;
  $('pay-confirm').focus();
  return new Promise((resolve) => {
    const choose = (action) => async () => {
      buttons.forEach((button) => (button.disabled = true));
      $('pay-progress').hidden = false;
      let status;
      try {
        status = await settle(paymentData.orderPaymentId, action);
      } catch (error) {
        log('refused', `host app server: ${action} failed: ${error.message}`);
        status = 'failed';
      }
      buttons.forEach((button) => (button.onclick = null));
      $('pay-sheet').hidden = true;
      resolve(status);
    };
    $('pay-confirm').onclick = choose('confirm');
    $('pay-cancel').onclick = choose('cancel');
    $('pay-fail').onclick = choose('fail');
  });
}

function answerCustomEvent(data, { expectsReply }) {
  log('in', `custom event ${data.type}${expectsReply ? ' (sendPromise)' : ' (send)'}`, data);
  const mode = $('custom-mode').value;
  if (mode === 'fail') throw new Error(`the simulator rejects ${data.type}`);
  if (mode === 'ignore') return new Promise(() => {});
  return { received: true, type: data.type };
}

let bridge;

function openMiniapp(url) {
  bridge?.close();
  const frame = $('miniapp');
  const origin = new URL(url, location.href).origin;
  bridge = createHostBridge({
    endpoint: miniappFrameEndpoint(window, () => frame.contentWindow, origin),
    onPay: async (paymentData) => {
      log('in', 'pay', paymentData);
      const status = await showPaymentSheet(paymentData);
      log('out', `pay result: ${status}`);
      return status;
    },
    onCustomEvent: answerCustomEvent,
    onRefused: (data, reason) => log('refused', `refused: ${reason}`, data),
  });
  $('miniapp-origin').textContent = origin;
  $('miniapp-url').value = url;
  $('no-miniapp').hidden = true;
  frame.src = url;
}

$('open-miniapp').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = $('miniapp-url').value;
  history.replaceState(null, '', `?${new URLSearchParams({ ...Object.fromEntries(params), miniapp: url })}`);
  openMiniapp(url);
});

$('emit-form').addEventListener('submit', (event) => {
  event.preventDefault();
  try {
    const text = $('emit-payload').value.trim();
    const data = { type: $('emit-type').value, ...(text !== '' && { payload: JSON.parse(text) }) };
    bridge?.emit({ type: MinibridgeWebAppCustomEvent, data });
    log('out', 'event to the miniapp', data);
  } catch (error) {
    log('refused', `not sent: ${error.message}`);
  }
});

if (['ok', 'fail', 'ignore'].includes(params.get('customEvents'))) $('custom-mode').value = params.get('customEvents');
if (params.get('miniapp')) openMiniapp(params.get('miniapp'));
