import { expect, it } from 'vitest';
import { createStore, type NewAuditEntry } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, seconds } from './fixtures.js';

// The audit log reads newest first, as the contract says (AuditEntryList): entries from several
// actors come back in the order they were written, never grouped by actor.
describeEachBackend('audit log', (database) => {
  const clock = manualClock();

  const entry = (actor: NewAuditEntry['actor'], field: string): NewAuditEntry => ({
    actor,
    action: 'update',
    partner_type: 'miniapps',
    partner_id: 'ma_shop',
    changes: [{ field, before: null, after: field }],
  });

  it('is newest first with entries from two actors interleaved, across pages', async () => {
    const store = createStore(database.db, { clock: clock.now });
    const operator: NewAuditEntry['actor'] = { type: 'operator', id: null };
    const partner: NewAuditEntry['actor'] = { type: 'miniapp', id: 'ma_shop' };
    const written: string[] = [];
    // Twelve: past the ninth, an order by the sequence number's text would put 10–12 after 1.
    for (let i = 0; i < 12; i++) {
      const field = `f${i}`;
      await store.partners.audit(database.db, entry(i % 2 === 0 ? partner : operator, field));
      written.push(field);
      clock.advance(seconds(1));
    }
    // Another partner's entries do not show.
    await store.partners.audit(database.db, { ...entry(operator, 'other'), partner_id: 'ma_other' });

    const first = await store.partners.auditPage('miniapps', 'ma_shop', 5, undefined);
    const second = await store.partners.auditPage('miniapps', 'ma_shop', 7, first.next_cursor ?? undefined);
    expect(second.next_cursor).toBeNull();
    const read = [...first.entries, ...second.entries];
    const newestFirst = [...written].reverse();
    expect(read.map((e) => e.changes[0]!.field)).toEqual(newestFirst);
    expect(read.map((e) => e.actor.type)).toEqual(Array.from({ length: 6 }, () => ['operator', 'miniapp']).flat());
    const times = read.map((e) => e.at);
    expect(times).toEqual([...times].sort().reverse());
  });
});
