// The partner dashboard: a partner's settings, credentials and their rotation, its payments with
// their timelines, its daily statements with a CSV download, its E6 deliveries with redelivery, and its audit log, through the Dashboard API. Operations are named by
// operationId and found in the contract (contract.js); forms and tables are made from the
// contract's schemas (forms.js), so a field added to the contract appears here without a change.
//
// The credentials a user signs in with live in `session`, in this module's memory only: never in
// localStorage, sessionStorage or a cookie, so a reload or a closed tab forgets them (ADR 0030).
import { call, deref, download, findOperation, loadContract, requestSchema } from './contract.js';
import { changes, clearErrors, flatten, renderObjectFields, showError } from './forms.js';

const $ = (id) => document.getElementById(id);

/** Per partner type (the `partner_type` path parameter): its operations and its id's name. */
/**
 * Settings only an operator may change (the contract's `UpdateMiniappRequest`: a partner sending
 * `hostapps` is refused). A partner sees them among the facts above the form instead.
 */
const OPERATOR_ONLY = new Set(['hostapps']);

const PARTNERS = {
  hostapps: { get: 'getHostapp', update: 'updateHostapp', list: 'listHostapps', idParam: 'client_id', label: 'host app' },
  miniapps: { get: 'getMiniapp', update: 'updateMiniapp', list: 'listMiniapps', idParam: 'app_id', label: 'miniapp' },
};

/** @type {{ id?: string, secret?: string, token?: string, operator: boolean, partnerType?: string, partnerId?: string } | undefined} */
let session;
let contract;
/** The partner record shown, as the platform last answered it: what the settings form changes. */
let shownRecord;
const cursors = { payments: undefined, statements: undefined, deliveries: undefined, audit: undefined };

function partnerParams(extra = {}) {
  return {
    partner_type: session.partnerType,
    partner_id: session.partnerId,
    [PARTNERS[session.partnerType].idParam]: session.partnerId,
    ...extra,
  };
}

function setBusy(element, busy) {
  for (const button of element.querySelectorAll('button')) button.disabled = busy;
}

function showStatus(element, text) {
  element.textContent = text;
  element.hidden = text === '';
}

function answerMessage(answer) {
  const body = answer.body ?? {};
  const message = body.error_message ?? `the platform answered HTTP ${answer.status}`;
  return body.error_code ? `${message} (${body.error_code})` : message;
}

/** The error slot of a panel shows the contract's `error_message`; an empty call hides it. */
function panelError(element, answer) {
  showStatus(element, answer ? answerMessage(answer) : '');
}

// ---- signing in -------------------------------------------------------------------------------

function signInMode() {
  const as = new FormData($('sign-in-form')).get('as');
  const fields = as === 'operator' ? 'operator' : 'partner';
  for (const field of document.querySelectorAll('#sign-in-form [data-for]')) field.hidden = field.dataset.for !== fields;
}

/**
 * A partner's credentials do not say whether it is a host app or a miniapp, so the form asks: a
 * guess would cost a request that answers 404, which the browser logs as an error in the console.
 */
async function signInAsPartner(partnerType, id, secret) {
  const partner = PARTNERS[partnerType];
  if (!partner) return { error: { ok: false, status: 0, body: { error_message: 'Choose a miniapp or a host app' } } };
  const candidate = { id, secret, operator: false, partnerType, partnerId: id };
  const answer = await call(candidate, partner.get, { params: { [partner.idParam]: id } });
  if (answer.ok) return { session: candidate, record: answer.body };
  return { error: answer };
}

async function signIn(event) {
  event.preventDefault();
  const form = $('sign-in-form');
  const error = form.querySelector('.form-error');
  const data = new FormData(form);
  showStatus(error, '');
  setBusy(form, true);
  try {
    contract ??= await loadContract();
    if (data.get('as') === 'operator') {
      const token = String(data.get('token') ?? '');
      const candidate = { token, operator: true };
      const hostapps = await listAll(candidate, PARTNERS.hostapps.list);
      if (hostapps.error) return showStatus(error, answerMessage(hostapps.error));
      const miniapps = await listAll(candidate, PARTNERS.miniapps.list);
      if (miniapps.error) return showStatus(error, answerMessage(miniapps.error));
      session = candidate;
      fillPartnerPicker(hostapps.items, miniapps.items);
      enterApp('operator');
      if ($('partner-picker').value) await choosePartner($('partner-picker').value);
    } else {
      const id = String(data.get('id') ?? '').trim();
      const result = await signInAsPartner(String(data.get('as')), id, String(data.get('secret') ?? ''));
      if (result.error) return showStatus(error, answerMessage(result.error));
      session = result.session;
      enterApp(`${PARTNERS[session.partnerType].label} ${id}`);
      await showPartner(result.record);
    }
  } catch (failure) {
    showStatus(error, failure instanceof Error ? failure.message : String(failure));
  } finally {
    // The secret is in `session` now (or refused): the form keeps no copy.
    form.reset();
    signInMode();
    setBusy(form, false);
  }
}

/** Every page of a list operation, following `next_cursor` (at most 50 pages of 200). */
async function listAll(candidate, operationId) {
  const items = [];
  let cursor;
  for (let pages = 0; pages < 50; pages += 1) {
    const answer = await call(candidate, operationId, { params: { limit: 200, cursor } });
    if (!answer.ok) return { error: answer };
    items.push(...listItems(answer.body));
    cursor = answer.body.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return { items };
}

/** The array member of a list answer (`hostapps`, `miniapps`, ...), as the list schema names it. */
function listItems(body) {
  const array = Object.values(body ?? {}).find((value) => Array.isArray(value));
  return array ?? [];
}

function fillPartnerPicker(hostapps, miniapps) {
  const picker = $('partner-picker');
  picker.replaceChildren();
  for (const [partnerType, items] of [
    ['hostapps', hostapps],
    ['miniapps', miniapps],
  ]) {
    const group = document.createElement('optgroup');
    group.label = PARTNERS[partnerType].label === 'host app' ? 'Host apps' : 'Miniapps';
    for (const item of items) {
      const id = item[PARTNERS[partnerType].idParam];
      group.append(new Option(item.name ? `${item.name} (${id})` : id, `${partnerType}/${id}`));
    }
    picker.append(group);
  }
}

async function choosePartner(value) {
  hideSecret();
  const [partnerType, ...rest] = value.split('/');
  session.partnerType = partnerType;
  session.partnerId = rest.join('/');
  const partner = PARTNERS[partnerType];
  const answer = await call(session, partner.get, { params: { [partner.idParam]: session.partnerId } });
  if (!answer.ok) return panelError($('settings-form').querySelector('.form-error'), answer);
  await showPartner(answer.body);
}

function enterApp(who) {
  $('sign-in').hidden = true;
  $('app').hidden = false;
  $('sign-out').hidden = false;
  $('operator-bar').hidden = !session.operator;
  $('who').textContent = `Signed in as ${who}`;
}

function signOut() {
  session = undefined;
  shownRecord = undefined;
  cursors.deliveries = cursors.audit = undefined;
  for (const id of ['identity', 'settings-fields']) $(id).replaceChildren();
  for (const table of document.querySelectorAll('table')) {
    table.tHead.replaceChildren();
    table.tBodies[0].replaceChildren();
  }
  hideSecret();
  $('app').hidden = true;
  $('sign-out').hidden = true;
  $('sign-in').hidden = false;
  $('who').textContent = '';
  selectTab('settings');
  $('sign-in-id').focus();
}

// ---- tabs -------------------------------------------------------------------------------------

const LOADERS = {
  settings: async () => {},
  credentials: loadCredentials,
  payments: () => loadPayments(false),
  statements: async () => {
    // Yesterday (UTC) by default: the latest day that can have closed.
    if (!$('statements-day').value) $('statements-day').value = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  },
  deliveries: () => loadDeliveries(false),
  audit: () => loadAudit(false),
};

function selectTab(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.id === `tab-${name}`;
    tab.setAttribute('aria-selected', String(selected));
    $(tab.getAttribute('aria-controls')).hidden = !selected;
  }
}

async function openTab(name) {
  selectTab(name);
  if (session) await LOADERS[name]();
}

// ---- settings ---------------------------------------------------------------------------------

function formatValue(value) {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.map(formatValue).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The read-only facts of the record: what the update schema does not let anyone change. */
function renderIdentity(record, editable) {
  const list = $('identity');
  list.replaceChildren();
  for (const [name, value] of Object.entries(record)) {
    if (editable.has(name)) continue;
    const dt = document.createElement('dt');
    dt.textContent = name;
    const dd = document.createElement('dd');
    dd.textContent = formatValue(value);
    dd.dataset.field = name;
    list.append(dt, dd);
  }
}

async function showPartner(record) {
  const partner = PARTNERS[session.partnerType];
  const schema = flatten(contract, await requestSchema(partner.update));
  const skip = session.operator ? [] : [...OPERATOR_ONLY];
  const editable = new Set(Object.keys(schema.properties ?? {}).filter((name) => !skip.includes(name)));
  shownRecord = record;
  renderIdentity(record, editable);
  const fields = $('settings-fields');
  fields.replaceChildren(renderObjectFields(contract, schema, record, { skip }));
  const form = $('settings-form');
  clearErrors(form);
  showStatus(form.querySelector('.form-error'), '');
  showStatus(form.querySelector('.form-ok'), '');
  cursors.payments = cursors.deliveries = cursors.audit = undefined;
  $('payment-detail').hidden = true;
  const open = document.querySelector('[role="tab"][aria-selected="true"]').id.replace('tab-', '');
  if (open !== 'settings') await LOADERS[open]();
}

async function saveSettings(event) {
  event.preventDefault();
  const form = $('settings-form');
  const partner = PARTNERS[session.partnerType];
  showStatus(form.querySelector('.form-error'), '');
  showStatus(form.querySelector('.form-ok'), '');
  clearErrors(form);
  const body = changes(form, shownRecord);
  if (Object.keys(body).length === 0) return showStatus(form.querySelector('.form-ok'), 'Nothing changed.');
  setBusy(form, true);
  try {
    const answer = await call(session, partner.update, { params: partnerParams(), body });
    if (!answer.ok) return showError(form, { ...answer.body, status: answer.status });
    await showPartner(answer.body);
    showStatus(form.querySelector('.form-ok'), 'Saved.');
  } finally {
    setBusy(form, false);
  }
}

// ---- tables made from the contract's item schemas -----------------------------------------------

/** The item schema of a list operation's 200 answer (the array member of its object). */
async function itemSchema(operationId, status = '200') {
  const { operation } = await findOperation(operationId);
  const response = deref(contract, operation.responses?.[status]);
  const schema = flatten(contract, response?.content?.['application/json']?.schema);
  const arrayProperty = Object.values(schema.properties ?? {})
    .map((each) => flatten(contract, each))
    .find((each) => each.type === 'array' || (Array.isArray(each.type) && each.type.includes('array')));
  return flatten(contract, arrayProperty ? arrayProperty.items : schema);
}

function cellContent(name, value) {
  if (Array.isArray(value) && value.every((each) => each && typeof each === 'object' && !Array.isArray(each))) {
    const list = document.createElement('ul');
    list.className = 'plain';
    for (const each of value) {
      const item = document.createElement('li');
      // An audit change (field, before, after) reads as "field: before → after".
      if (Object.hasOwn(each, 'field') && Object.hasOwn(each, 'before') && Object.hasOwn(each, 'after')) {
        item.textContent = `${each.field}: ${formatValue(each.before)} → ${formatValue(each.after)}`;
      } else item.textContent = formatValue(each);
      list.append(item);
    }
    return list;
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.values(value)
      .filter((each) => each !== null && each !== undefined)
      .join(' ');
  }
  return formatValue(value);
}

/**
 * Fills a table: one column per property of the item schema, in the contract's order, and an
 * action column when `action` makes a button for a row.
 */
/** One row of a table: a cell per column, named by `data-field`, and the action's button last. */
function tableRow(columns, item, action) {
  const row = document.createElement('tr');
  for (const name of columns) {
    const td = document.createElement('td');
    td.dataset.field = name;
    const content = cellContent(name, item[name]);
    if (typeof content === 'string') td.textContent = content;
    else td.append(content);
    if (name === 'status' && typeof item[name] === 'string') td.className = `status-${item[name]}`;
    row.append(td);
  }
  if (action) {
    const td = document.createElement('td');
    td.className = 'action';
    const button = action(item);
    if (button) td.append(button);
    row.append(td);
  }
  return row;
}

function renderTable(table, schema, items, { append = false, action, only } = {}) {
  const columns = Object.keys(schema.properties ?? {}).filter((name) => !only || only.includes(name));
  if (!append || table.tHead.rows.length === 0) {
    const row = document.createElement('tr');
    for (const name of columns) {
      const th = document.createElement('th');
      th.scope = 'col';
      // A long member name may wrap after an underscore, never inside a word.
      name.split('_').forEach((part, index) => {
        if (index > 0) th.append('_', document.createElement('wbr'));
        th.append(part);
      });
      row.append(th);
    }
    if (action) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.className = 'action';
      th.textContent = 'action';
      row.append(th);
    }
    table.tHead.replaceChildren(row);
  }
  const body = table.tBodies[0];
  if (!append) body.replaceChildren();
  for (const item of items) body.append(tableRow(columns, item, action));
  if (body.rows.length === 0) {
    const row = document.createElement('tr');
    const td = document.createElement('td');
    td.colSpan = columns.length + (action ? 1 : 0);
    td.className = 'empty';
    td.textContent = 'Nothing yet.';
    row.append(td);
    body.append(row);
  }
}

// ---- credentials ------------------------------------------------------------------------------

async function loadCredentials() {
  panelError($('credentials-error'));
  const answer = await call(session, 'listCredentials', { params: partnerParams() });
  if (!answer.ok) return panelError($('credentials-error'), answer);
  const schema = await itemSchema('listCredentials');
  const kinds = await credentialKinds();
  fillKinds(kinds);
  renderTable($('credentials-table'), schema, listItems(answer.body), {
    action: (credential) => {
      if (credential.status !== 'active') return undefined;
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'danger';
      button.textContent = 'Revoke';
      button.setAttribute('aria-label', `Revoke ${credential.kind} ${credential.credential_id}`);
      button.addEventListener('click', () => revoke(credential));
      return button;
    },
  });
}

/** The kinds a credential may be, from the issue operation's request schema. */
async function credentialKinds() {
  const schema = flatten(contract, await requestSchema('issueCredential'));
  return flatten(contract, schema.properties?.kind).enum ?? [];
}

function fillKinds(kinds) {
  const select = $('rotate-kind');
  if (select.options.length === kinds.length) return;
  select.replaceChildren(...kinds.map((kind) => new Option(kind, kind)));
}

async function rotate(event) {
  event.preventDefault();
  const form = $('rotate-form');
  const error = form.querySelector('.form-error');
  showStatus(error, '');
  setBusy(form, true);
  try {
    const kind = $('rotate-kind').value;
    const answer = await call(session, 'issueCredential', { params: partnerParams(), body: { kind } });
    if (!answer.ok) return panelError(error, answer);
    const issued = answer.body;
    showSecret(issued.secret, kind);
    // A partner signed in with its secret_key keeps working after it revokes the old one: the
    // dashboard signs in with the new secret from now on (held in memory, as the old one was).
    if (!session.operator && kind === 'secret_key') session.secret = issued.secret;
    await loadCredentials();
  } finally {
    setBusy(form, false);
  }
}

async function revoke(credential) {
  panelError($('credentials-error'));
  const answer = await call(session, 'revokeCredential', { params: partnerParams({ credential_id: credential.credential_id }) });
  if (!answer.ok) return panelError($('credentials-error'), answer);
  await loadCredentials();
}

function showSecret(secret, kind) {
  $('new-secret-kind').textContent = kind;
  $('new-secret-value').value = secret;
  showStatus($('copy-status'), '');
  $('new-secret').hidden = false;
  $('new-secret-value').focus();
  $('new-secret-value').select();
}

/** Once dismissed the secret is gone from the page: there is no way to show it again. */
function hideSecret() {
  $('new-secret-value').value = '';
  $('new-secret').hidden = true;
}

async function copySecret() {
  const value = $('new-secret-value').value;
  try {
    await navigator.clipboard.writeText(value);
    showStatus($('copy-status'), 'Copied to the clipboard.');
  } catch {
    $('new-secret-value').select();
    showStatus($('copy-status'), 'The browser refused the clipboard: the secret is selected, copy it with Ctrl+C.');
  }
}

// ---- payments ---------------------------------------------------------------------------------

/** The columns a page of payments shows (all of a payment's fields are in its detail). */
const PAYMENT_COLUMNS = [
  'order_payment_id',
  'client_id',
  'app_id',
  'miniapp_order_id',
  'amount',
  'currency',
  'payment_status',
  'settled_by',
  'stuck',
  'expires_at',
  'created_at',
];

async function fillPaymentStatuses() {
  const select = $('payments-status');
  if (select.options.length > 0) return;
  const { operation, item } = await findOperation('listPartnerPayments');
  const parameter = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
    .map((each) => deref(contract, each))
    .find((each) => each.in === 'query' && each.name === 'status');
  select.append(new Option('any', ''));
  for (const status of flatten(contract, parameter?.schema).enum ?? []) select.append(new Option(status, status));
}

/** A datetime-local value (UTC, as its label says) as RFC 3339, or undefined when empty. */
function utcInstant(value) {
  return value ? `${value.length === 16 ? `${value}:00` : value}Z` : undefined;
}

async function loadPayments(more) {
  await fillPaymentStatuses();
  panelError($('payments-error'));
  const filters = {
    status: $('payments-status').value || undefined,
    stuck: $('payments-stuck').checked ? 'true' : undefined,
    created_from: utcInstant($('payments-from').value),
    created_to: utcInstant($('payments-to').value),
    miniapp_order_id: $('payments-order').value || undefined,
    order_payment_id: $('payments-id').value || undefined,
  };
  const answer = await call(session, 'listPartnerPayments', {
    params: partnerParams({ ...filters, limit: 50, cursor: more ? cursors.payments : undefined }),
  });
  if (!answer.ok) return panelError($('payments-error'), answer);
  cursors.payments = answer.body.next_cursor ?? undefined;
  $('payments-more').hidden = !cursors.payments;
  renderTable($('payments-table'), await itemSchema('listPartnerPayments'), listItems(answer.body), {
    append: more,
    only: PAYMENT_COLUMNS,
    action: (payment) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = 'Open';
      button.setAttribute('aria-label', `Open ${payment.order_payment_id}`);
      button.addEventListener(
        'click',
        guarded(
          () => openPayment(payment),
          () => $('payments-error'),
        ),
      );
      return button;
    },
  });
}

/** One line of a payment's timeline: when, and what happened. */
function timelineEntry(at, text, kind) {
  const item = document.createElement('li');
  item.dataset.kind = kind;
  const time = document.createElement('time');
  time.dateTime = at;
  time.textContent = at;
  item.append(time, ` ${text}`);
  return item;
}

const SOURCES = {
  E1: 'created (E1); the host app created it (E3)',
  E5: 'reported by the host app (E5)',
  E4: 'learned from the host app when a miniapp asked (E2 → E4)',
  reconciliation: 'learned by the platform asking the host app itself (reconciliation, E4)',
};

async function openPayment(payment) {
  panelError($('payments-error'));
  const answer = await call(session, 'getPartnerPayment', {
    params: partnerParams({ client_id: payment.client_id, order_payment_id: payment.order_payment_id }),
  });
  if (!answer.ok) return panelError($('payments-error'), answer);
  const detail = answer.body;
  $('payment-detail-id').textContent = detail.order_payment_id;
  const facts = $('payment-facts');
  facts.replaceChildren();
  for (const [name, value] of Object.entries(detail)) {
    if (['history', 'reconciliation', 'deliveries'].includes(name)) continue;
    const dt = document.createElement('dt');
    dt.textContent = name;
    const dd = document.createElement('dd');
    dd.textContent = formatValue(value);
    dd.dataset.field = name;
    facts.append(dt, dd);
  }
  const entries = [
    ...detail.history.map((change) => ({
      at: change.at,
      kind: change.source,
      text:
        change.from_status === null
          ? `${change.to_status}: ${SOURCES.E1}`
          : `${change.to_status}${change.reason ? ` (${change.reason})` : ''}: ${SOURCES[change.source] ?? change.source}`,
    })),
    ...detail.reconciliation.map((ask) => ({
      at: ask.asked_at,
      kind: 'ask',
      text: `asked the host app (E4): ${ask.outcome}${ask.payment_status ? ` ${ask.payment_status}` : ''}${ask.detail ? `: ${ask.detail}` : ''} (${ask.duration_ms} ms)`,
    })),
    ...detail.deliveries.map((delivery) => ({
      at: delivery.created_at,
      kind: 'delivery',
      text: `E6 to the miniapp: ${delivery.status} after ${delivery.attempts_made} attempt(s)${delivery.last_error ? `, last error: ${delivery.last_error}` : ''}`,
    })),
  ];
  if (detail.expires_at) entries.push({ at: detail.expires_at, kind: 'expiry', text: 'expires: the host app takes no payment after this' });
  if (detail.stuck_since) entries.push({ at: detail.stuck_since, kind: 'stuck', text: 'stuck: still in process after its expiry' });
  const timeline = $('payment-timeline');
  timeline.replaceChildren(
    ...entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).map((entry) => timelineEntry(entry.at, entry.text, entry.kind)),
  );
  $('payment-detail').hidden = false;
}

// ---- deliveries -------------------------------------------------------------------------------

async function fillDeliveryStatuses() {
  const select = $('deliveries-status');
  if (select.options.length > 0) return;
  const { operation, item } = await findOperation('listPartnerDeliveries');
  const parameter = [...(item.parameters ?? []), ...(operation.parameters ?? [])]
    .map((each) => deref(contract, each))
    .find((each) => each.in === 'query' && each.name === 'status');
  select.append(new Option('any', ''));
  for (const status of flatten(contract, parameter?.schema).enum ?? []) select.append(new Option(status, status));
}

async function loadDeliveries(more) {
  await fillDeliveryStatuses();
  panelError($('deliveries-error'));
  if (!more) showStatus($('deliveries-ok'), '');
  const answer = await call(session, 'listPartnerDeliveries', {
    params: partnerParams({
      status: $('deliveries-status').value,
      order_payment_id: $('deliveries-payment').value.trim(),
      limit: 50,
      cursor: more ? cursors.deliveries : undefined,
    }),
  });
  if (!answer.ok) return panelError($('deliveries-error'), answer);
  cursors.deliveries = answer.body.next_cursor ?? undefined;
  $('deliveries-more').hidden = !cursors.deliveries;
  renderTable($('deliveries-table'), await itemSchema('listPartnerDeliveries'), listItems(answer.body), {
    append: more,
    action: redeliverButton,
  });
}

function redeliverButton(delivery) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Redeliver';
  button.setAttribute('aria-label', `Redeliver ${delivery.delivery_id}`);
  button.addEventListener('click', () => redeliver(delivery, button));
  return button;
}

/** Shows a delivery as the platform last answered it, in place: the rest of the table (and its pages) stays. */
async function showDelivery(delivery) {
  const row = $('deliveries-table')
    .querySelector(`button[aria-label="Redeliver ${CSS.escape(delivery.delivery_id)}"]`)
    ?.closest('tr');
  if (!row) return;
  const columns = Object.keys((await itemSchema('listPartnerDeliveries')).properties ?? {});
  row.replaceWith(tableRow(columns, delivery, redeliverButton));
}

/** How long a redelivered row follows its delivery until the attempt's outcome shows. */
const FOLLOW_MS = 20_000;
const FOLLOW_EVERY_MS = 1_000;

async function redeliver(delivery, button) {
  panelError($('deliveries-error'));
  showStatus($('deliveries-ok'), '');
  button.disabled = true;
  try {
    const answer = await call(session, 'redeliverPartnerDelivery', { params: partnerParams({ delivery_id: delivery.delivery_id }) });
    if (!answer.ok) return panelError($('deliveries-error'), answer);
    await showDelivery(answer.body);
    showStatus($('deliveries-ok'), `Delivery ${delivery.delivery_id} queued for an attempt now (${answer.body.status}).`);
    await followDelivery(answer.body);
  } finally {
    button.disabled = false;
  }
}

// ---- statements -------------------------------------------------------------------------------

async function loadStatement(more) {
  panelError($('statements-error'));
  const day = $('statements-day').value;
  const answer = await call(session, 'getPartnerStatement', {
    params: partnerParams({ day, limit: 200, cursor: more ? cursors.statements : undefined }),
  });
  if (!answer.ok) return panelError($('statements-error'), answer);
  cursors.statements = answer.body.next_cursor ?? undefined;
  $('statements-more').hidden = !cursors.statements;
  const { operation } = await findOperation('getPartnerStatement');
  const schema = flatten(contract, deref(contract, operation.responses?.['200'])?.content?.['application/json']?.schema);
  const part = (name) => flatten(contract, flatten(contract, schema.properties?.[name]).items);
  renderTable($('statements-totals'), part('totals'), answer.body.totals);
  renderTable($('statements-lines'), part('lines'), answer.body.lines, { append: more });
}

async function downloadStatement() {
  panelError($('statements-error'));
  const answer = await download(session, 'downloadPartnerStatement', { params: partnerParams({ day: $('statements-day').value }) });
  if (!answer.ok) return panelError($('statements-error'), answer);
  const link = document.createElement('a');
  link.href = URL.createObjectURL(answer.blob);
  link.download = answer.filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

/**
 * The attempt a redelivery queues runs within moments: the row follows it (reading the deliveries
 * of that payment) until it leaves `pending`, for a bounded time, so nobody needs Refresh.
 */
async function followDelivery(queued) {
  const following = session;
  for (let waited = 0; waited < FOLLOW_MS && queued.status === 'pending'; waited += FOLLOW_EVERY_MS) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
    if (session !== following) return;
    const answer = await call(session, 'listPartnerDeliveries', {
      params: partnerParams({ order_payment_id: queued.order_payment_id, limit: 50 }),
    });
    if (!answer.ok) return;
    const now = listItems(answer.body).find((each) => each.delivery_id === queued.delivery_id);
    if (!now) return;
    await showDelivery(now);
    if (now.status !== 'pending') return;
  }
}

// ---- audit ------------------------------------------------------------------------------------

async function loadAudit(more) {
  panelError($('audit-error'));
  const answer = await call(session, 'listAuditEntries', {
    params: partnerParams({ limit: 50, cursor: more ? cursors.audit : undefined }),
  });
  if (!answer.ok) return panelError($('audit-error'), answer);
  cursors.audit = answer.body.next_cursor ?? undefined;
  $('audit-more').hidden = !cursors.audit;
  renderTable($('audit-table'), await itemSchema('listAuditEntries'), listItems(answer.body), { append: more });
}

// ---- wiring -----------------------------------------------------------------------------------

/** Runs a handler and shows what it throws (a contract that could not be read, a lost connection). */
function guarded(handler, errorElement) {
  return async (...args) => {
    try {
      await handler(...args);
    } catch (failure) {
      showStatus(errorElement(), failure instanceof Error ? failure.message : String(failure));
    }
  };
}

$('sign-in-form').addEventListener('submit', signIn);
$('sign-in-form').addEventListener('change', signInMode);
$('sign-out').addEventListener('click', signOut);
$('settings-form').addEventListener(
  'submit',
  guarded(saveSettings, () => $('settings-form').querySelector('.form-error')),
);
$('rotate-form').addEventListener(
  'submit',
  guarded(rotate, () => $('rotate-form').querySelector('.form-error')),
);
$('copy-secret').addEventListener('click', copySecret);
$('dismiss-secret').addEventListener('click', hideSecret);
$('payments-filter').addEventListener(
  'submit',
  guarded(
    (event) => {
      event.preventDefault();
      return loadPayments(false);
    },
    () => $('payments-error'),
  ),
);
$('payments-more').addEventListener(
  'click',
  guarded(
    () => loadPayments(true),
    () => $('payments-error'),
  ),
);
$('statements-form').addEventListener(
  'submit',
  guarded(
    (event) => {
      event.preventDefault();
      return loadStatement(false);
    },
    () => $('statements-error'),
  ),
);
$('statements-more').addEventListener(
  'click',
  guarded(
    () => loadStatement(true),
    () => $('statements-error'),
  ),
);
$('statements-download').addEventListener(
  'click',
  guarded(downloadStatement, () => $('statements-error')),
);
$('deliveries-filter').addEventListener(
  'submit',
  guarded(
    (event) => {
      event.preventDefault();
      return loadDeliveries(false);
    },
    () => $('deliveries-error'),
  ),
);
$('deliveries-refresh').addEventListener(
  'click',
  guarded(
    () => loadDeliveries(false),
    () => $('deliveries-error'),
  ),
);
$('deliveries-more').addEventListener(
  'click',
  guarded(
    () => loadDeliveries(true),
    () => $('deliveries-error'),
  ),
);
$('audit-more').addEventListener(
  'click',
  guarded(
    () => loadAudit(true),
    () => $('audit-error'),
  ),
);
$('partner-picker').addEventListener(
  'change',
  guarded(
    (event) => choosePartner(event.target.value),
    () => $('settings-form').querySelector('.form-error'),
  ),
);
for (const tab of document.querySelectorAll('[role="tab"]')) {
  const name = tab.id.replace('tab-', '');
  const errorSlot = {
    settings: 'settings-form',
    credentials: 'credentials-error',
    payments: 'payments-error',
    statements: 'statements-error',
    deliveries: 'deliveries-error',
    audit: 'audit-error',
  }[name];
  tab.addEventListener(
    'click',
    guarded(
      () => openTab(name),
      () => (name === 'settings' ? $(errorSlot).querySelector('.form-error') : $(errorSlot)),
    ),
  );
}
// The tab list as the ARIA tabs pattern has it: arrow keys, Home and End move between tabs.
document.querySelector('[role="tablist"]').addEventListener('keydown', (event) => {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const at = tabs.indexOf(document.activeElement);
  if (at < 0) return;
  const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  const tab = tabs[(next + tabs.length) % tabs.length];
  tab.focus();
  tab.click();
});
document.body.dataset.ready = 'true';
