/**
 * An attacker's pass over statements and the payment search (ADR 0041, ADR 0039): what a signed-in
 * partner could send as a day, a page size, a cursor or a filter, whose statement it could try to
 * read, and what its own order fields could do to a spreadsheet opening the CSV. Every answer is
 * checked against the contract by the harness: refused in the contract's words, never a 500.
 */
import type { ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { statementDayRule } from '../../../src/contract/records.js';
import { createStore } from '../../../src/platform/store/index.js';
import type { Received } from '../../support/fakePartners.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

const DAY = 86_400_000;
const operator = `Bearer ${ADMIN_TOKEN}`;
const harness = new PlatformHarness();
const statementPath = (type: string, id: string, day: string) => `/api/v1/dashboard/${type}/${id}/statements/${day}`;
const paymentsPath = `/api/v1/dashboard/miniapps/${MINIAPP.id}/payments`;

/** Order fields a spreadsheet would run, or that break a naive CSV writer. */
const hostile = [
  '=HYPERLINK("http://x.example","go")',
  '+1+1',
  '-1+1',
  '@SUM(A1)',
  '\tTAB',
  '\rCR',
  'line\r\nbreak',
  '"quoted", with comma',
  '＝1+1',
  'ünïcødé ✓ 𝄞',
];
const amounts = ['99999999999999999999', '999999999999999999.99', '0.01', '12345678901234567.8', '0', '7', '1.10', '3', '5', '9'];
let day: string;
const made: { orderPaymentId: string; miniappOrderId: string; amount: string }[] = [];

beforeAll(async () => {
  let counter = 0;
  harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_atk_${++counter}` }));
  });
  harness.miniapp.on('/complete-order', { code: 'SUCCESS' });
  await harness.start({ config: { records: { pollMs: 60_000, batchSize: 100, restRatio: 1, enabled: false } } });
  for (const [index, miniappOrderId] of hostile.entries()) {
    const amount = amounts[index]!;
    const e1 = await harness.call(
      'createOrderPayment',
      `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","order":{"currency":${JSON.stringify(index === 0 ? '=cmd|x' : 'VND')},"amount":${amount},"miniapp_order_id":${JSON.stringify(miniappOrderId)}}}`,
      { authorization: harness.miniappAuth() },
    );
    expect(e1.status, miniappOrderId).toBe(200);
    const e5 = await harness.call(
      'completeOrder',
      { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: e1.body.order_payment_id, payment_status: 'paid' },
      { authorization: harness.hostappBasic() },
    );
    expect(e5.status).toBe(200);
    made.push({ orderPaymentId: e1.body.order_payment_id, miniappOrderId, amount });
  }
  day = new Date().toISOString().slice(0, 10);
  const closer = createStore(harness.running.platform.store.db, {
    clock: () => new Date(Date.parse(`${day}T00:00:00Z`) + DAY + statementDayRule().closesAfterMs),
  });
  while (await closer.statements.closeNextDay());
}, 180_000);
afterAll(() => harness.stop());

async function statement(path: string, authorization = harness.miniappAuth()) {
  return harness.call('getPartnerStatement', undefined, { authorization, path });
}

describe('the day', () => {
  test.each([
    ['2026-02-29', 'not a leap year'],
    ['2100-02-29', 'a century that is not a leap year'],
    ['2026-13-01', 'month 13'],
    ['2026-00-10', 'month 0'],
    ['2026-04-31', 'April 31'],
    ['0000-01-01', 'year 0'],
    ['2026-1-01', 'one-digit month'],
    ['20261125', 'no dashes'],
    ['2026-11-25T00:00:00Z', 'an instant'],
    ['today', 'a word'],
    ['%202026-11-25', 'a leading space'],
    ['2026-11-25%00', 'NUL'],
    ['-2026-11-25', 'a sign'],
    ['٢٠٢٦-١١-٢٥', 'other digits'],
  ])('%s (%s) is refused with 400 on JSON and CSV', async (text) => {
    const json = await statement(statementPath('miniapps', MINIAPP.id, text));
    expect(json.status).toBe(400);
    expect(json.body.error_code).toBe('INVALID_REQUEST');
    const csv = await harness.call('downloadPartnerStatement', undefined, {
      authorization: harness.miniappAuth(),
      path: `${statementPath('miniapps', MINIAPP.id, text)}/csv`,
    });
    expect(csv.status).toBe(400);
  });

  test('a leap day, the first day of the calendar and the far past are closed and empty; the far future and today are not found', async () => {
    for (const past of ['2024-02-29', '2000-02-29', '0001-01-01', '1970-01-01']) {
      const answer = await statement(statementPath('miniapps', MINIAPP.id, past));
      expect(answer.status, past).toBe(200);
      expect(answer.body).toMatchObject({ day: past, totals: [], lines: [], next_cursor: null });
    }
    for (const future of ['9999-12-31', '2999-01-01', new Date(Date.now() + DAY).toISOString().slice(0, 10)]) {
      const answer = await statement(statementPath('miniapps', MINIAPP.id, future));
      expect(answer.status, future).toBe(404);
      expect(answer.body.error_code).toBe('NOT_FOUND');
    }
  });
});

describe('page sizes and cursors', () => {
  test.each(['0', '1001', '-1', '1.5', 'ten', '', '1e2', '0x10', '99999999999999999999'])('limit=%s is refused with 400', async (limit) => {
    const answer = await statement(`${statementPath('miniapps', MINIAPP.id, day)}?limit=${limit}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error_code).toBe('INVALID_REQUEST');
  });

  test('pages of one and of a thousand list the same lines, whoever reads', async () => {
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await statement(`${statementPath('miniapps', MINIAPP.id, day)}?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(...page.body.lines.map((line: { order_payment_id: string }) => line.order_payment_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    const whole = await statement(`${statementPath('hostapps', HOSTAPP.id, day)}?limit=1000`, operator);
    expect(whole.body.lines.map((line: { order_payment_id: string }) => line.order_payment_id)).toEqual(pages);
    expect(pages).toHaveLength(made.length);
  });

  test('forged, tampered and foreign cursors are refused with 400, never a 500', async () => {
    const first = await statement(`${statementPath('miniapps', MINIAPP.id, day)}?limit=1`);
    const real: string = first.body.next_cursor;
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const payments = await harness.call('listPartnerPayments', undefined, {
      authorization: harness.miniappAuth(),
      path: `${paymentsPath}?limit=1`,
    });
    const paymentCursor: string = payments.body.next_cursor;
    const forged = [
      `${real.slice(0, -2)}`,
      `${real}A`,
      real.replace(/[A-Za-z]/, (c) => (c === 'A' ? 'B' : 'A')),
      encode(['a']),
      encode(['a', 'b', 'c']),
      encode(['', 'b']),
      encode(['a', 1]),
      encode({ client_id: 'a', order_payment_id: 'b' }),
      encode(['a'.repeat(251), 'b']),
      encode(['a\u0000', 'b']),
      encode(null),
      'ab+c/d==',
      'x'.repeat(4097),
      paymentCursor,
    ];
    for (const cursor of forged) {
      const answer = await statement(`${statementPath('miniapps', MINIAPP.id, day)}?cursor=${encodeURIComponent(cursor)}`);
      expect(answer.status, cursor).toBe(400);
      expect(answer.body.error_code).toBe('INVALID_REQUEST');
      const list = await harness.call('listPartnerPayments', undefined, {
        authorization: harness.miniappAuth(),
        path: `${paymentsPath}?cursor=${encodeURIComponent(cursor === paymentCursor ? real : cursor)}`,
      });
      expect(list.status, cursor).toBe(400);
    }
    // A well-formed key the caller made up pages its own statement from there: it reveals nothing of anyone else's.
    const madeUp = await statement(`${statementPath('miniapps', MINIAPP.id, day)}?cursor=${encode(['zz_after_every_host_app', 'hop_x'])}`);
    expect(madeUp.status).toBe(200);
    expect(madeUp.body.lines).toEqual([]);
  });
});

describe('whose statement', () => {
  test("a miniapp asking for its host app's statement, another miniapp's, or one that does not exist gets the same 404", async () => {
    const answers = [];
    for (const [type, id] of [
      ['hostapps', HOSTAPP.id],
      ['hostapps', 'ha_nowhere'],
      ['miniapps', 'ma_nowhere'],
    ] as const) {
      for (const suffix of ['', '/csv']) {
        const path = `${statementPath(type, id, day)}${suffix}`;
        const answer = await harness.call(suffix ? 'downloadPartnerStatement' : 'getPartnerStatement', undefined, {
          authorization: harness.miniappAuth(),
          path,
        });
        expect(answer.status, path).toBe(404);
        answers.push({ code: answer.body.error_code, message: answer.body.error_message.replace(id, '<id>') });
      }
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(2);
    // The host app reading the miniapp's statement: the same.
    const hostapp = await statement(statementPath('miniapps', MINIAPP.id, day), harness.hostappBasic());
    expect(hostapp.status).toBe(404);
  });

  test('an unknown partner type is a bad request, not a 500', async () => {
    const answer = await statement(statementPath('operators', MINIAPP.id, day));
    expect([400, 404]).toContain(answer.status);
  });
});

describe('the CSV', () => {
  test('every hostile cell is inert text, every digit of every amount is kept, and the file parses back to the JSON', async () => {
    const response = await fetch(`${harness.running.url}${statementPath('miniapps', MINIAPP.id, day)}/csv`, {
      headers: { authorization: harness.miniappAuth() },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const records = parse(text, { columns: true, relax_quotes: false }) as Record<string, string>[];
    const lines = records.filter((record) => record.record === 'payment');
    expect(lines).toHaveLength(made.length);
    for (const payment of made) {
      const record = lines.find((line) => line.order_payment_id === payment.orderPaymentId)!;
      expect(record.amount).toBe(payment.amount);
      const formula = /^[=+\-@\t\r＝＋－＠]/.test(payment.miniappOrderId);
      expect(record.miniapp_order_id).toBe(formula ? `'${payment.miniappOrderId}` : payment.miniappOrderId);
    }
    // No cell of the file, however quoted, starts with what a spreadsheet runs.
    for (const record of records) for (const cell of Object.values(record)) expect(cell, cell).not.toMatch(/^[=+\-@\t\r＝＋－＠]/);
    const totals = records.filter((record) => record.record === 'total');
    const json = await statement(statementPath('miniapps', MINIAPP.id, day));
    expect(
      totals.map((total) => ({
        currency: total.currency.replace(/^'/, ''),
        payment_status: total.payment_status,
        count: Number(total.count),
        amount: total.amount,
      })),
    ).toEqual(json.body.totals);
    const vnd = json.body.totals.find((total: { currency: string }) => total.currency === 'VND');
    // 999999999999999999.99 + 0.01 + 12345678901234567.8 + 0 + 7 + 1.10 + 3 + 5 + 9, in decimal.
    expect(vnd.amount).toBe('1012345678901234592.90');
  });
});

describe('the payment search', () => {
  test.each([
    ['status=PAID', 'a status in capitals'],
    ['status=', 'an empty status'],
    ['stuck=1', 'stuck as a number'],
    ['stuck=yes', 'stuck as a word'],
    ['created_from=2026-11-25', 'a date where an instant belongs'],
    ['created_from=2026-11-25T10:00:00', 'an instant without its offset'],
    ['created_from=2026-02-30T00:00:00Z', '30 February'],
    ['created_from=0000-12-31T23:00:00Z', 'year 0'],
    ['created_to=9999-12-31T23:00:00-05:00', 'past year 9999 in UTC'],
    ['created_from=2026-11-25T23:59:60Z', 'a leap second'],
    ['created_from=2026-11-25T10:00:00Z&created_to=2026-11-25T10:00:00Z', 'an empty range'],
    ['created_from=2026-11-26T00:00:00Z&created_to=2026-11-25T00:00:00Z', 'a reversed range'],
    ['miniapp_order_id=', 'an empty order id'],
    [`miniapp_order_id=${'x'.repeat(251)}`, 'an order id too long'],
    ['order_payment_id=%00', 'NUL'],
    ['limit=0', 'limit 0'],
    ['limit=201', 'limit above the contract'],
    ['status=paid&status=failed', 'a filter given twice'],
  ])('%s (%s) is refused with 400', async (query) => {
    const answer = await harness.call('listPartnerPayments', undefined, {
      authorization: harness.miniappAuth(),
      path: `${paymentsPath}?${query}`,
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error_code).toBe('INVALID_REQUEST');
  });

  test('filters find exactly their payments; the other partner’s are not found by id', async () => {
    const target = made[3]!;
    const byOrder = await harness.call('listPartnerPayments', undefined, {
      authorization: harness.miniappAuth(),
      path: `${paymentsPath}?miniapp_order_id=${encodeURIComponent(target.miniappOrderId)}`,
    });
    expect(byOrder.body.payments.map((payment: { order_payment_id: string }) => payment.order_payment_id)).toEqual([target.orderPaymentId]);
    const stuck = await harness.call('listPartnerPayments', undefined, {
      authorization: harness.miniappAuth(),
      path: `${paymentsPath}?stuck=true`,
    });
    expect(stuck.body.payments).toEqual([]);
    const inRange = await harness.call('listPartnerPayments', undefined, {
      authorization: harness.miniappAuth(),
      path: `${paymentsPath}?created_from=0001-01-01T00:00:00Z&created_to=9999-12-31T23:59:59Z&status=paid&limit=200`,
    });
    expect(inRange.body.payments).toHaveLength(made.length);
    const notMine = await harness.call('getPartnerPayment', undefined, {
      authorization: harness.miniappAuth(),
      path: `/api/v1/dashboard/miniapps/${MINIAPP.id}/payments/ha_other/${target.orderPaymentId}`,
    });
    expect(notMine.status).toBe(404);
    const otherPartner = await harness.call('getPartnerPayment', undefined, {
      authorization: harness.miniappAuth(),
      path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}/payments/${HOSTAPP.id}/${target.orderPaymentId}`,
    });
    expect(otherPartner.status).toBe(404);
  });
});

describe('erasure', () => {
  const user = 'u_attack_erase';
  const body = { client_id: HOSTAPP.id, hostapp_user_id: user };

  /** A payment of `of`: each test erases a user of its own, whatever ran before it. */
  async function paymentOf(of: string) {
    const e1 = await harness.call(
      'createOrderPayment',
      { app_id: MINIAPP.id, client_id: HOSTAPP.id, order: { currency: 'VND', amount: '5', hostapp_user_id: of } },
      { authorization: harness.miniappAuth() },
    );
    expect(e1.status).toBe(200);
    return e1;
  }

  test('only the admin token erases: every partner credential, and a bearer of a partner secret, is 401 and changes nothing', async () => {
    const e1 = await paymentOf(user);
    for (const authorization of [
      undefined,
      harness.hostappBasic(),
      harness.hostappToken(),
      harness.miniappAuth(),
      `Bearer ${HOSTAPP.secret}`,
      `Bearer ${MINIAPP.secret}`,
      `Bearer ${ADMIN_TOKEN}x`,
      `bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`:${ADMIN_TOKEN}`).toString('base64')}`,
    ]) {
      const answer = await harness.call('eraseHostappUser', body, authorization === undefined ? {} : { authorization });
      expect(answer.status, authorization).toBe(401);
    }
    const [row] = await harness.running.platform.store.db.query<{ hostapp_user_id: string | null }>(
      'SELECT hostapp_user_id FROM order_payments WHERE order_payment_id = $1',
      [e1.body.order_payment_id],
    );
    expect(row?.hostapp_user_id).toBe(user);
  });

  test.each([
    ['{}', 'nothing'],
    [JSON.stringify({ client_id: HOSTAPP.id }), 'no user'],
    [JSON.stringify({ hostapp_user_id: user }), 'no host app'],
    [JSON.stringify({ ...body, hostapp_user_id: '' }), 'an empty user id'],
    [JSON.stringify({ ...body, hostapp_user_id: 'u'.repeat(256) }), 'a user id too long'],
    [JSON.stringify({ ...body, hostapp_user_id: 42 }), 'a number'],
    [JSON.stringify({ ...body, hostapp_user_id: [user] }), 'a list'],
    [JSON.stringify({ ...body, hostapp_user_id: null }), 'null'],
    [JSON.stringify({ ...body, hostapp_user_id: { $ne: null } }), 'an operator object'],
    ['{"client_id":"ha_test","hostapp_user_id":"u\\u0000x"}', 'NUL'],
    ['{"client_id":"ha_test","hostapp_user_id":"u\\ud800"}', 'a lone surrogate'],
    [JSON.stringify({ ...body, client_id: 'h'.repeat(251) }), 'a client_id too long'],
    [JSON.stringify({ ...body, extra: true }), 'an unknown member'],
    [JSON.stringify([body]), 'a list of requests'],
    ['{"client_id":"ha_test","hostapp_user_id":"a","hostapp_user_id":"b"}', 'a member twice'],
    ['{"client_id":"ha_test",', 'broken JSON'],
  ])('%s (%s) is 400 in the contract’s words', async (text) => {
    const answer = await harness.call('eraseHostappUser', text, { authorization: operator });
    expect(answer.status).toBe(400);
    expect(answer.body.error_code).toBe('INVALID_REQUEST');
  });

  test('a body too large is 413 and another media type 415, not a 500', async () => {
    const huge = await harness.call('eraseHostappUser', JSON.stringify({ ...body, padding: 'x'.repeat(2_000_000) }), {
      authorization: operator,
    });
    expect(huge.status).toBe(413);
    const response = await fetch(`${harness.running.url}/api/v1/dashboard/erasures`, {
      method: 'POST',
      headers: { authorization: operator, 'content-type': 'text/plain' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error_code?: string }).error_code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  test('erasing leaves every statement digit and amount as it was, twice; the audit and the answer never hold the id', async () => {
    const user = 'u_attack_erase_twice';
    const body = { client_id: HOSTAPP.id, hostapp_user_id: user };
    await paymentOf(user);
    const before = {
      json: await statement(statementPath('hostapps', HOSTAPP.id, day), operator),
      csv: await (
        await fetch(`${harness.running.url}${statementPath('hostapps', HOSTAPP.id, day)}/csv`, { headers: { authorization: operator } })
      ).text(),
      money: await harness.running.platform.store.db.query(
        'SELECT order_payment_id, amount_text, currency, payment_status FROM order_payments ORDER BY 1',
      ),
    };
    const first = await harness.call('eraseHostappUser', body, { authorization: operator });
    expect(first.status).toBe(200);
    expect(first.body.payments).toBe(1);
    const second = await harness.call('eraseHostappUser', body, { authorization: operator });
    expect(second.body).toEqual({ payments: 0, events: 0, user_digest: first.body.user_digest });
    expect(first.text).not.toContain(user);
    expect(await statement(statementPath('hostapps', HOSTAPP.id, day), operator)).toMatchObject({ status: 200, body: before.json.body });
    expect(
      await (
        await fetch(`${harness.running.url}${statementPath('hostapps', HOSTAPP.id, day)}/csv`, { headers: { authorization: operator } })
      ).text(),
    ).toBe(before.csv);
    expect(
      await harness.running.platform.store.db.query(
        'SELECT order_payment_id, amount_text, currency, payment_status FROM order_payments ORDER BY 1',
      ),
    ).toEqual(before.money);
    const audit = await harness.call('listAuditEntries', undefined, {
      authorization: operator,
      path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}/audit`,
    });
    expect(audit.status).toBe(200);
    expect(audit.text).not.toContain(user);
    expect(JSON.stringify(await harness.running.platform.store.db.query('SELECT * FROM audit_entries'))).not.toContain(user);
  });
});
