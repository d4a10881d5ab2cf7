/**
 * The hostile-input suite for partner answers (ADR 0016): for every partner operation
 * of the contract (E3, E4 POST and GET, E6, E7 both ways), seeded fast-check generators of
 * answers around and far over the size cap, endless answers, answers that trickle past the
 * time-out, prototype-named and duplicate member names, odd number texts, and answers about
 * something else. Each case asserts the platform's contract-shaped answer (the harness checks
 * every answer against the contract), what the store holds, that nothing of a refused answer was
 * passed on, and that the platform read a bounded number of bytes.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLosslessNumber, maxJsonDepth, parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import type { PartnerOperationId } from '../../../src/platform/outbound/partnerCall.js';
import type { Received } from '../../support/fakePartners.js';
import { describeOnBackends } from '../../support/databases.js';
import type { PlatformHarness } from '../../support/platformHarness.js';
import {
  endless,
  exactly,
  json,
  objectText,
  oddNumberTextArb,
  otherIdArb,
  paddedTo,
  PROTOTYPE_NAMES,
  prototypeNameArb,
  jsonValueTextArb,
  trickle,
  whitespaceArb,
  type AnswerWriter,
  type Member,
} from './partnerAnswers/answers.js';
import {
  aboutMembers,
  createOrder,
  partnerOperationIds,
  scenarios,
  startHostileHarness,
  TWIN_MINIAPP,
  type Scenario,
} from './partnerAnswers/scenarios.js';

const SEED = Number(process.env.HOSTILE_SEED ?? 20261123);
/** What the platform may have read beyond the cap: a chunk in flight plus the kernel's socket buffers on loopback. */
const READ_SLACK_BYTES = 16 * 1024 * 1024;

describeOnBackends('hostile partner answers', (backend) => {
  let harness: PlatformHarness;
  let sharedRefs = 0;
  let table: Map<PartnerOperationId, Scenario>;

  beforeAll(async () => {
    harness = await startHostileHarness(backend.name);
    table = scenarios(harness);
  }, 60_000);
  afterAll(async () => {
    await harness?.stop();
  }, 60_000);

  const operations = partnerOperationIds();
  const seedOf = (operationId: string, property: string) =>
    [...`${operationId}/${property}`].reduce((hash, char) => (Math.imul(hash, 31) + char.charCodeAt(0)) | 0, SEED);

  /** Runs one hostile answer through a scenario. */
  async function attempt(scenario: Scenario, build: (request: Received) => AnswerWriter) {
    const fire = await scenario.prepare();
    return fire(build);
  }

  /** What a refusal for an answer out of contract looks like in this scenario. */
  async function expectInvalid(scenario: Scenario, trial: Awaited<ReturnType<typeof attempt>>, hint?: string) {
    await trial.refused(scenario.invalidCode, hint);
    const seen = Object.getOwnPropertyNames(Object.prototype);
    expect(seen.filter((name) => !ORIGINAL_PROTOTYPE.includes(name))).toEqual([]);
  }
  const ORIGINAL_PROTOTYPE = Object.getOwnPropertyNames(Object.prototype);

  it('covers every partner operation of the contract', () => {
    expect(new Set(operations)).toEqual(new Set(table.keys()));
    // The cap and the time-out come from the contract for each one.
    for (const scenario of table.values()) expect(scenario.maxAnswerBytes).toBeGreaterThan(0);
  });

  describe.each(operations)('%s answers', (operationId) => {
    const scenario = () => table.get(operationId)!;

    it('around and far over the size cap: taken up to the cap, refused past it, read no further', async () => {
      const s = scenario();
      const cap = s.maxAnswerBytes;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            size: fc.oneof(fc.integer({ min: cap - 48, max: cap + 48 }), fc.integer({ min: cap + 1, max: cap * 24 })),
            framing: fc.constantFrom('content-length' as const, 'chunked' as const),
            whitespace: whitespaceArb,
            chunkSize: fc.integer({ min: 512, max: 64 * 1024 }),
          }),
          async ({ size, framing, whitespace, chunkSize }) => {
            let sent = '';
            const trial = await attempt(s, (request) => {
              const body = paddedTo(objectText(s.valid(request)), size, whitespace);
              sent = body.toString('utf8');
              return exactly(body, framing, chunkSize);
            });
            if (size <= cap) {
              await trial.accepted(sent);
              return;
            }
            await expectInvalid(s, trial, `larger than ${cap} bytes`);
            for (const written of await trial.writes())
              expect(written.bytes).toBeLessThanOrEqual(Math.min(size, cap + chunkSize + READ_SLACK_BYTES));
          },
        ),
        { seed: seedOf(operationId, 'size'), numRuns: 10 },
      );
    }, 120_000);

    it('endless: an answer that never ends is cut at the cap, not read until the time-out', async () => {
      const s = scenario();
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            prefix: fc.constantFrom('{', '[', '{"a":"', '{"custom_attributes":{"k":[', ''),
            filler: fc.constantFrom(' ', 'a', '0', '{"k":1},', '\n\t'),
            chunkSize: fc.integer({ min: 256, max: 64 * 1024 }),
          }),
          async ({ prefix, filler, chunkSize }) => {
            const trial = await attempt(s, () => endless(prefix, filler, chunkSize));
            await expectInvalid(s, trial, `larger than ${s.maxAnswerBytes} bytes`);
            const writes = await trial.writes();
            expect(writes.length).toBeGreaterThan(0);
            for (const written of writes) {
              expect(written.cutByPeer).toBe(true);
              expect(written.bytes).toBeLessThanOrEqual(s.maxAnswerBytes + chunkSize + READ_SLACK_BYTES);
            }
          },
        ),
        { seed: seedOf(operationId, 'endless'), numRuns: 4 },
      );
    }, 120_000);

    it('prototype-named and duplicate member names: never reach a prototype; duplicates refused where values are acted on', async () => {
      const s = scenario();
      const injection = fc.record({ name: prototypeNameArb, value: jsonValueTextArb, nested: fc.boolean() });
      const twist = fc.constantFrom('none' as const, 'duplicate' as const, 'hide required' as const);
      await fc.assert(
        fc.asyncProperty(
          fc.array(injection, { minLength: 1, maxLength: 4 }),
          twist,
          jsonValueTextArb,
          async (injections, how, duplicateValue) => {
            let sent = '';
            let refusal = false;
            const trial = await attempt(s, (request) => {
              const top: Member[] = [...s.valid(request)];
              const nested: Member[] = s.stored
                ? Object.entries(JSON.parse(top.find(([name]) => name === s.stored)![1]) as object).map(([k, v]): Member => [k, json(v)])
                : [];
              for (const { name, value, nested: inside } of injections) (inside && s.stored ? nested : top).push([name, value]);
              if (s.stored)
                top.splice(
                  top.findIndex(([name]) => name === s.stored),
                  1,
                  [s.stored, objectText(nested)],
                );
              if (how === 'duplicate') top.push([top[0]![0], duplicateValue]);
              // A required member moved under a prototype-named key: present only on the prototype side.
              const hidden = how === 'hide required' && s.requiredStrings.length > 0;
              if (hidden) {
                const [member] = top.splice(
                  top.findIndex(([name]) => name === s.requiredStrings[0]),
                  1,
                );
                top.push([PROTOTYPE_NAMES[injections.length % 2]!, objectText([member!])]);
              }
              refusal = s.reading === 'interpreted' && (hidden || hasDifferingDuplicate(top) || hasDifferingDuplicate(nested));
              sent = objectText(top);
              return exactly(Buffer.from(sent), 'content-length');
            });
            if (refusal) await expectInvalid(s, trial);
            else await trial.accepted(sent);
            expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(ORIGINAL_PROTOTYPE);
          },
        ),
        { seed: seedOf(operationId, 'keys'), numRuns: 12 },
      );
    }, 120_000);

    it('nesting past x-max-json-depth refused; U+0000 and lone surrogates refused where values are acted on', async () => {
      const s = scenario();
      // The answer object holds the value (and the stored member, where there is one, one level more).
      // Thousands of levels still fit under the size cap (6 bytes a level at most), so the depth is what is refused.
      const around = s.stored ? 2 : 1;
      const nested = fc
        .record({
          depth: fc.oneof(
            fc.integer({ min: maxJsonDepth() - around - 1, max: maxJsonDepth() - around + 2 }),
            fc.integer({ min: 1000, max: 5000 }),
          ),
          objects: fc.boolean(),
        })
        .map(({ depth, objects }) => ({
          depth: depth + around,
          text: objects ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`,
        }));
      // A string holding U+0000 or a lone surrogate, as a value or as a member name (JSON.stringify writes both as \u escapes).
      const unstorable = fc
        .record({ code: fc.oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.constant(0)), asName: fc.boolean() })
        .map(({ code, asName }) => ({ text: `x${String.fromCharCode(code)}y`, asName }));
      const hostile = fc.oneof(
        nested.map((deep) => ({ deep, unstorable: undefined })),
        unstorable.map((bad) => ({ deep: undefined, unstorable: bad })),
      );
      await fc.assert(
        fc.asyncProperty(hostile, async ({ deep, unstorable: bad }) => {
          let sent = '';
          const member: Member = deep ? ['v', deep.text] : bad!.asName ? [bad!.text, '1'] : ['v', json(bad!.text)];
          const trial = await attempt(s, (request) => {
            const members: Member[] = [...s.valid(request)];
            if (s.stored) members[members.findIndex(([name]) => name === s.stored)] = [s.stored, objectText([member])];
            else members.push(member);
            sent = objectText(members);
            return exactly(Buffer.from(sent), 'content-length');
          });
          if (deep ? deep.depth > maxJsonDepth() : s.reading === 'interpreted')
            await expectInvalid(s, trial, deep ? 'nested more than' : undefined);
          else await trial.accepted(sent);
        }),
        { seed: seedOf(operationId, 'unreadable'), numRuns: 8 },
      );
    }, 120_000);

    it('odd number texts: kept digit for digit where free-form, refused where a string is required', async () => {
      const s = scenario();
      await fc.assert(
        fc.asyncProperty(oddNumberTextArb, fc.constantFrom('extra', 'required' as const), async (number, where) => {
          let sent = '';
          const replaceRequired = where === 'required' && s.requiredStrings.length > 0;
          const trial = await attempt(s, (request) => {
            const members: Member[] = s
              .valid(request)
              .map(([name, value]) => (replaceRequired && name === s.requiredStrings.at(-1) ? [name, number] : [name, value]));
            if (!replaceRequired && s.stored) {
              const index = members.findIndex(([name]) => name === s.stored);
              members[index] = [s.stored, `{"amount":${number},"list":[${number},"${number}"]}`];
            } else if (!replaceRequired) {
              members.push(['amount', number]);
            }
            sent = objectText(members);
            return exactly(Buffer.from(sent), 'chunked');
          });
          if (replaceRequired) {
            await expectInvalid(s, trial);
            return;
          }
          await trial.accepted(sent);
        }),
        { seed: seedOf(operationId, 'numbers'), numRuns: 10 },
      );
    }, 120_000);
  });

  describe('answers about something else', () => {
    const withIds = operations.filter((operationId) => aboutMembers(operationId).length > 0);

    it('the contract names what E4 answers are about (and E3, E6, E7 answers name nothing of their request)', () => {
      expect(new Set(withIds)).toEqual(new Set(['getHostappPaymentStatus', 'queryHostappPaymentStatus']));
      for (const operationId of withIds)
        expect(new Set(aboutMembers(operationId))).toEqual(new Set(['app_id', 'client_id', 'order_payment_id']));
    });

    it.each(withIds)(
      '%s: a report naming another payment, miniapp or host app changes nothing',
      async (operationId) => {
        const s = table.get(operationId)!;
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...aboutMembers(operationId)), otherIdArb, async (member, other) => {
            const trial = await attempt(s, (request) => {
              const members = s
                .valid(request)
                .map(([name, value]): Member =>
                  name === member ? [name, json(JSON.parse(value) === other ? `${other}x` : other)] : [name, value],
                );
              return exactly(Buffer.from(objectText(members)), 'content-length');
            });
            await expectInvalid(s, trial, member);
          }),
          { seed: seedOf(operationId, 'about'), numRuns: 8 },
        );
      },
      120_000,
    );

    it('E3: an order_payment_id already bound to another order records nothing, marks no key done, and a retry succeeds', async () => {
      const s = table.get('createHostappOrderPayment')!;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('same miniapp, another order', 'another miniapp, same miniapp_order_id', 'another miniapp, another order'),
          async (owner) => {
            // The order that owns the id: the twin miniapp's order may share the miniapp_order_id of the next E1.
            const shared = owner.includes('same miniapp_order_id') ? `SHARED-${++sharedRefs}` : undefined;
            const owned = await createOrder(harness, {
              appId: owner.startsWith('another miniapp') ? TWIN_MINIAPP.id : undefined,
              miniappOrderId: shared,
            });
            const fire = await s.prepare({ miniappOrderId: shared });
            const trial = await fire(() =>
              exactly(Buffer.from(objectText([['order_payment_id', json(owned.order_payment_id)]])), 'content-length'),
            );
            await expectInvalid(s, trial, 'already gave another order');
          },
        ),
        { seed: seedOf('createHostappOrderPayment', 'bound'), numRuns: 6 },
      );
    }, 120_000);
  });

  describe('slow answers', () => {
    it('every partner answer that trickles past its contract time-out is cut and refused', async () => {
      // One trickle per operation, all at once: each lasts its operation's time-out.
      const prepared = [];
      for (const operationId of operations) {
        const s = table.get(operationId)!;
        const [shape] = fc.sample(fc.record({ bytesPerStep: fc.integer({ min: 1, max: 4 }), whitespace: whitespaceArb }), {
          seed: seedOf(operationId, 'slow'),
          numRuns: 1,
        });
        prepared.push({ s, shape, fire: await s.prepare() });
      }
      const trials = await Promise.all(
        prepared.map(async ({ s, shape, fire }) => {
          const trial = await fire((request) => {
            const body = paddedTo(objectText(s.valid(request)), 200, shape!.whitespace).toString('utf8');
            // Spread over twice the time-out: the last byte always comes too late.
            const steps = Math.ceil(body.length / shape!.bytesPerStep);
            return trickle(body, shape!.bytesPerStep, Math.ceil((2 * s.timeoutMs) / steps));
          });
          return { s, trial };
        }),
      );
      for (const { s, trial } of trials) {
        await trial.refused(s.timeoutCode, `within ${s.timeoutMs / 1000} s`);
        const writes = await trial.writes();
        expect(writes.length).toBeGreaterThan(0);
        for (const written of writes) expect(written.cutByPeer).toBe(true);
      }
    }, 120_000);
  });

  /** Whether a member list names a member twice with values that differ (numbers by their exact text). */
  function hasDifferingDuplicate(members: readonly Member[]): boolean {
    const seen = new Map<string, string>();
    for (const [name, value] of members) {
      const earlier = seen.get(name);
      if (earlier !== undefined && canonical(earlier) !== canonical(value)) return true;
      seen.set(name, value);
    }
    return false;
  }

  /** A JSON text with object members in name order and numbers as written: equal values, equal texts. */
  function canonical(text: string): string {
    const sort = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sort)
        : value !== null && typeof value === 'object' && !isLosslessNumber(value)
          ? Object.fromEntries(
              Object.entries(value)
                .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
                .map(([k, v]) => [k, sort(v)]),
            )
          : value;
    return stringifyLossless(sort(parseLossless(text)));
  }
});
