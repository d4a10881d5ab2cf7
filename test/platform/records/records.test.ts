/**
 * Statements, retention and erasure through the Dashboard API (ADR 0041), on each backend. Payments
 * go through E1 and E5 as partners make them; the day is closed by a store over the same database
 * whose clock is set by hand to the close. The CSV is read back with csv-parse.
 */
import type { ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadDocument, resolve } from '../../../src/contract/documents.js';
import { retentionBounds, retentionKinds, retentionSetting, statementDayRule } from '../../../src/contract/records.js';
import { configFromEnv } from '../../../src/platform/config.js';
import { namedIn } from '../../../src/platform/events/eventBridge.js';
import { parseLossless } from '../../../src/contract/json.js';
import { startPlatform } from '../../../src/platform/server.js';
import { createStore } from '../../../src/platform/store/index.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';
import { propertyRunOptions } from '../../support/properties.js';

const operator = `Bearer ${ADMIN_TOKEN}`;
const DAY = 86_400_000;
const platformDocument = loadDocument('platform');
/** A schema's member names, read from the contract here rather than through the code under test. */
const membersOf = (name: string) =>
  Object.keys(resolve<{ properties: object }>(platformDocument, { $ref: `#/components/schemas/${name}` }).properties);
const decimal = resolve<{ anyOf: [{ pattern: string }]; examples: (string | number)[] }>(loadDocument('platform'), {
  $ref: '#/components/schemas/Decimal',
});

/** Amounts from the contract: its Decimal examples, its boundaries, and a seeded sample of its string pattern. */
const amounts: string[] = [
  ...decimal.examples.map(String),
  '0',
  '0.01',
  '99999999999999999999',
  '999999999999999999.99',
  '12345678901234567.89',
  '125000.50',
  ...fc.sample(fc.stringMatching(new RegExp(decimal.anyOf[0].pattern)), propertyRunOptions('statement amounts', 30)),
];

describeOnBackends('statements, retention and erasure', (backend) => {
  const harness = new PlatformHarness();
  let counter = 0;
  const made: { orderPaymentId: string; amount: string; miniappOrderId: string }[] = [];
  const days = new Set<string>();

  beforeAll(async () => {
    harness.hostapp
      .on('/create-order-payment', (_request: Received, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_rec_${++counter}` }));
      })
      .on('/events', { host_received: true });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' }).on('/events', { miniapp_received: true });
    await harness.start({ backend: backend.name, config: { records: { pollMs: 60_000, batchSize: 100, restRatio: 1, enabled: false } } });
    const hostileIds = ['=HYPERLINK("http://x.example","go")', '-2+3', '@SUM(A1)', '+1', '\tTAB', 'plain "quoted", with comma'];
    for (const [index, amount] of amounts.entries()) {
      const miniappOrderId = hostileIds[index] ?? `ORD-${index}`;
      // Half as JSON numbers, written by their digits, half as strings.
      const amountJson = index % 2 === 0 ? JSON.stringify(amount) : amount;
      const e1 = await harness.call(
        'createOrderPayment',
        `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","order":{"currency":"VND","amount":${amountJson},"miniapp_order_id":${JSON.stringify(miniappOrderId)}}}`,
        { authorization: harness.miniappAuth() },
      );
      expect(e1.status, `E1 with amount ${amountJson}`).toBe(200);
      const orderPaymentId: string = e1.body.order_payment_id;
      const e5 = await harness.call(
        'completeOrder',
        {
          app_id: MINIAPP.id,
          client_id: HOSTAPP.id,
          order_payment_id: orderPaymentId,
          payment_status: index % 5 === 4 ? 'cancelled' : 'paid',
        },
        { authorization: harness.hostappBasic() },
      );
      expect(e5.status).toBe(200);
      made.push({ orderPaymentId, amount, miniappOrderId });
    }
    for (const row of await harness.running.platform.store.db.query<{ day: string }>(
      `SELECT DISTINCT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM payment_status_history WHERE to_status <> 'in_process'`,
    ))
      days.add(row.day);
    // Close every day they settled on, with a clock at the last one's close.
    const last = [...days].sort().at(-1)!;
    const closer = createStore(harness.running.platform.store.db, {
      clock: () => new Date(Date.parse(`${last}T00:00:00Z`) + DAY + statementDayRule().closesAfterMs),
    });
    while (await closer.statements.closeNextDay());
  }, 180_000);
  afterAll(() => harness.stop());

  const statementPath = (type: string, id: string, day: string) => `/api/v1/dashboard/${type}/${id}/statements/${day}`;

  async function wholeStatement(type: string, id: string, auth: string, day: string) {
    const lines: { amount: string; order_payment_id: string }[] = [];
    let cursor: string | null = null;
    let totals: unknown;
    do {
      const page = await harness.call('getPartnerStatement', undefined, {
        authorization: auth,
        path: `${statementPath(type, id, day)}?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(page.status).toBe(200);
      totals ??= page.body.totals;
      expect(page.body.totals).toEqual(totals);
      lines.push(...page.body.lines);
      cursor = page.body.next_cursor;
    } while (cursor);
    return { lines, totals };
  }

  test('both sides list the same lines and totals; every amount keeps its digits from E1 to JSON and CSV', async () => {
    const byId = new Map(made.map((payment) => [payment.orderPaymentId, payment]));
    const seen = new Set<string>();
    for (const day of days) {
      const asMiniapp = await wholeStatement('miniapps', MINIAPP.id, harness.miniappAuth(), day);
      const asHostapp = await wholeStatement('hostapps', HOSTAPP.id, harness.hostappBasic(), day);
      expect(asHostapp).toEqual(asMiniapp);
      for (const line of asMiniapp.lines) {
        expect(line.amount).toBe(byId.get(line.order_payment_id)!.amount);
        seen.add(line.order_payment_id);
      }
      const csv = await fetch(`${harness.running.url}${statementPath('miniapps', MINIAPP.id, day)}/csv`, {
        headers: { authorization: harness.miniappAuth() },
      });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="statement-${MINIAPP.id}-${day}.csv"`);
      const text = await csv.text();
      // Every member of a line and of a total is a column: a member the contract gains and the CSV lacks fails here.
      const header = text.split('\r\n')[0]!.split(',');
      const lineMembers = membersOf('StatementLine');
      expect(header).toEqual([
        'record',
        ...lineMembers.filter((member) => member !== 'adjustment'),
        ...membersOf('StatementTotal').filter((member) => !lineMembers.includes(member)),
      ]);
      // The operation's description names the same columns, in order.
      const described = /The first row names the columns:([^.]*)\./.exec(
        String(
          resolve<{ get: { description: string } }>(
            platformDocument,
            platformDocument.paths![`/api/v1/dashboard/{partner_type}/{partner_id}/statements/{day}/csv`],
          ).get.description,
        ),
      );
      expect([...described![1]!.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]).filter((name) => header.includes(name!))).toEqual(
        header,
      );
      const records = parse(text, { columns: true, relax_quotes: false }) as Record<string, string>[];
      const payments = records.filter((record) => record.record !== 'total');
      expect(payments.map((record) => record.order_payment_id)).toEqual(asMiniapp.lines.map((line) => line.order_payment_id));
      // Each row carries its JSON line's every member (the adjustment flag as the record kind).
      payments.forEach((record, index) => {
        const line = asMiniapp.lines[index]! as Record<string, unknown>;
        expect(record.record).toBe(line.adjustment ? 'adjustment' : 'payment');
        for (const member of lineMembers.filter((name) => name !== 'adjustment')) {
          const value = line[member] === undefined ? '' : String(line[member]);
          expect(record[member], member).toBe(/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
        }
      });
      for (const record of payments) {
        const made_ = byId.get(record.order_payment_id)!;
        expect(record.amount).toBe(made_.amount);
        // A cell a spreadsheet would run is written with a leading quote; everything else as sent.
        expect(record.miniapp_order_id).toBe(/^[=+\-@\t\r]/.test(made_.miniappOrderId) ? `'${made_.miniappOrderId}` : made_.miniappOrderId);
      }
      const totals = records.filter((record) => record.record === 'total');
      expect(
        totals.map((total) => ({
          currency: total.currency,
          payment_status: total.payment_status,
          count: Number(total.count),
          amount: total.amount,
        })),
      ).toEqual(asMiniapp.totals);
    }
    expect(seen.size).toBe(made.length);
  });

  test('the paid total equals the store sum of the day, exactly', async () => {
    for (const day of days) {
      const [{ sum }] = (await harness.running.platform.store.db.query<{ sum: string | null }>(
        `SELECT sum(p.amount)::text AS sum FROM order_payments p JOIN payment_status_history h USING (client_id, order_payment_id)
         WHERE h.to_status = 'paid' AND h.at >= $1::date AND h.at < $1::date + 1`,
        [day],
      )) as [{ sum: string | null }];
      const statement = await wholeStatement('hostapps', HOSTAPP.id, harness.hostappBasic(), day);
      const paid = (statement.totals as { payment_status: string; amount: string }[]).find((total) => total.payment_status === 'paid');
      expect(paid?.amount ?? null).toBe(sum);
    }
  });

  test('open days, impossible dates, bad cursors and other partners are refused in the contract’s words', async () => {
    const open = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const day = [...days][0]!;
    const cases: [string, string, string, number][] = [
      ['an open day', statementPath('miniapps', MINIAPP.id, open), harness.miniappAuth(), 404],
      ['30 February', statementPath('miniapps', MINIAPP.id, '2026-02-30'), harness.miniappAuth(), 400],
      ['year 0', statementPath('miniapps', MINIAPP.id, '0000-01-01'), harness.miniappAuth(), 400],
      ['a bad cursor', `${statementPath('miniapps', MINIAPP.id, day)}?cursor=bm90LWEtY3Vyc29y`, harness.miniappAuth(), 400],
      ['another partner', statementPath('hostapps', HOSTAPP.id, day), harness.miniappAuth(), 404],
    ];
    for (const [name, path, authorization, status] of cases) {
      const answer = await harness.call('getPartnerStatement', undefined, { authorization, path });
      expect(answer.status, name).toBe(status);
      const csv = await harness.call('downloadPartnerStatement', undefined, { authorization, path: `${path.split('?')[0]}/csv` });
      expect(csv.status, `${name} (csv)`).toBe(name === 'a bad cursor' ? 200 : status);
    }
  });

  test('a day with as many totals as a JSON statement carries is served whole; one more is 409 CONFLICT naming the CSV, which carries every total', async () => {
    const limit = resolve<{ properties: { totals: { maxItems: number } } }>(platformDocument, { $ref: '#/components/schemas/Statement' })
      .properties.totals.maxItems;
    const { db } = harness.running.platform.store;
    // Two closed days of the miniapp's, one line per currency and status (a currency is any text an E1
    // sends): `limit` totals on the first, `limit + 1` on the second. Before the first settlement on
    // record, so no other test's lines are on them.
    const [atLimit, pastLimit] = ['2020-01-01', '2020-01-02'];
    for (const [day, count] of [
      [atLimit, limit],
      [pastLimit, limit + 1],
    ] as const) {
      await db.query('INSERT INTO statement_days (day, closed_at) VALUES ($1::date, $2)', [day, new Date(`${day}T23:00:00Z`)]);
      await db.query(
        `INSERT INTO statement_lines (day, client_id, order_payment_id, app_id, miniapp_order_id, amount_text, currency,
           payment_status, payment_fail_reason, settled_by, created_at, settled_at, adjustment)
         SELECT $1::date, $2, 'hop_totals_' || $1 || '_' || n, $3, NULL, n || '.01', 'C' || lpad((n / 3)::text, 4, '0'),
           (ARRAY['cancelled', 'failed', 'paid'])[n % 3 + 1], NULL, 'E5', $4, $4, FALSE
         FROM generate_series(0, $5::int - 1) AS n`,
        [day, HOSTAPP.id, MINIAPP.id, new Date(`${day}T12:00:00Z`), count],
      );
    }
    const whole = await harness.call('getPartnerStatement', undefined, {
      authorization: harness.miniappAuth(),
      path: statementPath('miniapps', MINIAPP.id, atLimit),
    });
    expect(whole.status).toBe(200);
    expect(whole.body.totals).toHaveLength(limit);

    const csvPath = `${statementPath('miniapps', MINIAPP.id, pastLimit)}/csv`;
    for (const authorization of [harness.miniappAuth(), `Bearer ${ADMIN_TOKEN}`]) {
      const refused = await harness.call('getPartnerStatement', undefined, {
        authorization,
        path: `${statementPath('miniapps', MINIAPP.id, pastLimit)}?limit=1`,
      });
      expect(refused.status).toBe(409);
      expect(refused.body.error_code).toBe('CONFLICT');
      expect(refused.body.error_message).toContain(`GET ${csvPath}`);
    }
    const csv = await fetch(`${harness.running.url}${csvPath}`, { headers: { authorization: harness.miniappAuth() } });
    expect(csv.status).toBe(200);
    const records = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    const totals = records.filter((record) => record.record === 'total');
    expect(totals).toHaveLength(limit + 1);
    expect(records.filter((record) => record.record === 'payment')).toHaveLength(limit + 1);
    expect(new Set(totals.map((total) => `${total.currency} ${total.payment_status}`)).size).toBe(limit + 1);
    expect(totals.every((total) => total.count === '1')).toBe(true);
  });

  test('a read failing midway through a CSV cuts the download, and the platform goes on answering', async () => {
    const day = [...days][0]!;
    const { statements } = harness.running.platform.store;
    const totals = statements.totals;
    // The lines are read and sent; the totals, read last, fail as a database gone midway would.
    statements.totals = () => Promise.reject(new Error('connection terminated unexpectedly'));
    try {
      const csv = await fetch(`${harness.running.url}${statementPath('miniapps', MINIAPP.id, day)}/csv`, {
        headers: { authorization: harness.miniappAuth() },
      });
      expect(csv.status).toBe(200);
      await expect(csv.text()).rejects.toThrow();
    } finally {
      statements.totals = totals;
    }
    const again = await harness.call('getPartnerStatement', undefined, {
      authorization: harness.miniappAuth(),
      path: statementPath('miniapps', MINIAPP.id, day),
    });
    expect(again.status).toBe(200);
  });

  test('the retention policy in force is the contract’s, as the environment set it', async () => {
    const answer = await harness.call('getRetentionPolicy', undefined, { authorization: harness.miniappAuth() });
    expect(answer.status).toBe(200);
    const bounds = retentionBounds();
    expect(answer.body.periods).toEqual(
      retentionKinds.map((kind) => ({
        kind,
        days: bounds[kind].default,
        default_days: bounds[kind].default,
        minimum_days: bounds[kind].minimum,
        maximum_days: bounds[kind].maximum,
        setting: retentionSetting(kind),
      })),
    );
    expect(bounds.financial_record).toEqual({ default: 1826, minimum: 400, maximum: 3650 });
    expect(bounds.idempotency_keys.default).toBe(1);
    expect(configFromEnv({ MINIBRIDGE_RETENTION_EVENT_PAYLOADS_DAYS: '30' }).retention.event_payloads).toBe(30);
  });

  test('erasure: operators only, audited with a digest, never the id; events name whom they carry', async () => {
    const e8 = await harness.call(
      'sendHostappEvent',
      {
        app_id: MINIAPP.id,
        client_id: HOSTAPP.id,
        event_type: 'user_profile_updated',
        payload: { hostapp_user_id: 'u_erase_me', fields: ['name'] },
      },
      { authorization: harness.hostappToken() },
    );
    expect(e8.status).toBe(200);
    const body = { client_id: HOSTAPP.id, hostapp_user_id: 'u_erase_me' };
    expect((await harness.call('eraseHostappUser', body, { authorization: harness.hostappBasic() })).status).toBe(401);
    expect((await harness.call('eraseHostappUser', { ...body, client_id: 'ha_nowhere' }, { authorization: operator })).status).toBe(404);
    expect((await harness.call('eraseHostappUser', { ...body, extra: 1 }, { authorization: operator })).status).toBe(400);
    const erased = await harness.call('eraseHostappUser', body, { authorization: operator });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ payments: 0, events: 1 });
    const again = await harness.call('eraseHostappUser', body, { authorization: operator });
    expect(again.body).toEqual({ payments: 0, events: 0, user_digest: erased.body.user_digest });
    const audit = await harness.call('listAuditEntries', undefined, {
      authorization: operator,
      path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}/audit`,
    });
    // Other tests of this file erase other users of the same host app: this user's entries are those carrying its digest.
    const entries = audit.body.entries.filter(
      (entry: { action: string }) => entry.action === 'erase_personal_data' && JSON.stringify(entry).includes(erased.body.user_digest),
    );
    expect(entries).toHaveLength(2);
    expect(audit.text).not.toContain('u_erase_me');
    expect(audit.text).toContain(erased.body.user_digest);
    expect(JSON.stringify(await harness.running.platform.store.db.query('SELECT * FROM event_log'))).not.toContain('u_erase_me');
  });

  test('erasure finds the user named anywhere in an event’s payload, in objects and arrays at any depth, and nobody else’s events', async () => {
    const send = (operationId: 'sendHostappEvent' | 'sendMiniappEvent', payload: object) =>
      harness.call(
        operationId,
        { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'order_note', payload },
        { authorization: operationId === 'sendHostappEvent' ? harness.hostappToken() : harness.miniappAuth() },
      );
    const nested = [
      await send('sendHostappEvent', { order: { buyer: { hostapp_user_id: 'u_nested_erase' } }, note: 'ring twice' }),
      await send('sendMiniappEvent', { items: [[{ ref: { hostapp_user_id: 'u_nested_erase' } }], { hostapp_user_id: 'u_nested_keep' }] }),
      await send('sendHostappEvent', { a: { b: { c: { d: { e: [{ f: [{ hostapp_user_id: 'u_nested_erase' }] }] } } } } }),
    ];
    const kept = await send('sendHostappEvent', { people: [{ hostapp_user_id: 'u_nested_keep', text: 'u_nested_erase is my friend' }] });
    for (const answer of [...nested, kept]) expect(answer.status).toBe(200);
    const body = { client_id: HOSTAPP.id, hostapp_user_id: 'u_nested_erase' };
    const erased = await harness.call('eraseHostappUser', body, { authorization: operator });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ payments: 0, events: nested.length });
    const { db } = harness.running.platform.store;
    const left = await db.query<{ payload: string | null }>(
      `SELECT payload FROM event_log WHERE payload LIKE '%u_nested_%' OR receiver_response LIKE '%u_nested_erase%'`,
    );
    // Only the event naming someone else stays (it mentions the user in free text, which names nobody).
    expect(left.map((row) => JSON.parse(row.payload!))).toEqual([
      { people: [{ hostapp_user_id: 'u_nested_keep', text: 'u_nested_erase is my friend' }] },
    ]);
    expect((await harness.call('eraseHostappUser', body, { authorization: operator })).body).toMatchObject({ payments: 0, events: 0 });
  });
});

test('a records batch or poll interval of 0 stops the start: a batch of 0 purges nothing and never rests, a poll of 0 spins', () => {
  expect(() => configFromEnv({ MINIBRIDGE_RECORDS_BATCH: '0' })).toThrow(/MINIBRIDGE_RECORDS_BATCH=0: expected a whole number from 1/);
  expect(() => configFromEnv({ MINIBRIDGE_RECORDS_POLL_MS: '0' })).toThrow(/MINIBRIDGE_RECORDS_POLL_MS=0: expected a whole number from 1/);
  expect(configFromEnv({ MINIBRIDGE_RECORDS_BATCH: '1', MINIBRIDGE_RECORDS_POLL_MS: '1' }).records).toMatchObject({
    batchSize: 1,
    pollMs: 1,
  });
});

test('a misspelt, malformed or out-of-bounds retention setting stops the start with a clear message', async () => {
  expect(() => configFromEnv({ MINIBRIDGE_RETENTION_EVENT_PAYLOAD_DAYS: '30' })).toThrow(
    /MINIBRIDGE_RETENTION_EVENT_PAYLOAD_DAYS is not a retention setting.*MINIBRIDGE_RETENTION_EVENT_PAYLOADS_DAYS/,
  );
  expect(() => configFromEnv({ MINIBRIDGE_RETENTION_FINANCIAL_RECORD_DAYS: '399' })).toThrow(/from 400 to 3650/);
  expect(() => configFromEnv({ MINIBRIDGE_RETENTION_FINANCIAL_RECORD_DAYS: '3651' })).toThrow(/from 400 to 3650/);
  expect(() => configFromEnv({ MINIBRIDGE_RETENTION_DELIVERIES_DAYS: '1e2' })).toThrow(/whole number of days/);
  // Malformed values, each named in the message with what is expected.
  for (const value of ['', ' ', '1e3', '-1', '+30', '30d', '30 days', '3.0', '0x1e', '٣٠', '99999999999999999999', 'NaN', 'Infinity'])
    expect(() => configFromEnv({ MINIBRIDGE_RETENTION_DELIVERIES_DAYS: value }), JSON.stringify(value)).toThrow(
      /MINIBRIDGE_RETENTION_DELIVERIES_DAYS=.*expected a whole number of days from 1 to 3650 \(x-retention\.deliveries\)/,
    );
  // Misspelt names the prefix check alone would miss: another case, a typo in the prefix.
  for (const name of [
    'minibridge_retention_deliveries_days',
    'Minibridge_Retention_Deliveries_Days',
    'MINIBRIDGE_RETENTON_DELIVERIES_DAYS',
    'MINIBRIDGE_RETAIN_DELIVERIES_DAYS',
  ])
    expect(() => configFromEnv({ [name]: '30' }), name).toThrow(new RegExp(`${name} is not a retention setting`));
  process.env.MINIBRIDGE_RETENTION_DELIVERIES_DAYS = '0';
  try {
    await expect(startPlatform({ config: { port: 0, host: '127.0.0.1', dataDir: 'memory://' } })).rejects.toThrow(
      /MINIBRIDGE_RETENTION_DELIVERIES_DAYS=0/,
    );
  } finally {
    delete process.env.MINIBRIDGE_RETENTION_DELIVERIES_DAYS;
  }
});

test('whom a payload names: every hostapp_user_id and order_payment_id text at any depth, once each, within the ids’ lengths', () => {
  const long = 'u'.repeat(256);
  const astral = '𝄞'.repeat(255);
  const payload = parseLossless(
    JSON.stringify({
      hostapp_user_id: 'top',
      list: [[{ hostapp_user_id: 'deep', order_payment_id: 'hop_1' }], { hostapp_user_id: 'top' }],
      ['__proto__']: { hostapp_user_id: 'in_proto_member' },
      numbers: { hostapp_user_id: 1234567, amount: 1.5 },
      empty: { hostapp_user_id: '' },
      tooLong: { hostapp_user_id: long, order_payment_id: 'p'.repeat(251) },
      astral: { hostapp_user_id: astral },
    }),
  );
  const named = namedIn(payload);
  expect(new Set(named.names_users)).toEqual(new Set(['top', 'deep', 'in_proto_member', astral]));
  expect(named.names_payments).toEqual(['hop_1']);
  expect(namedIn({ fields: ['name'] })).toEqual({ names_users: null, names_payments: null });
});
