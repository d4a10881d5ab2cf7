import { describe, expect, it } from 'vitest';

// The pay sheet's amount formatting (src/tools/simulator/public/amount.js, a browser module) in Node,
// whose Intl has the same data as Chromium's.
type Shown = { number: string; currency: string; excessDigits: boolean };
const { formatAmount, minorUnits } = (await import('../../src/tools/simulator/public/amount.js' as string)) as {
  formatAmount(amount: string | number, currency: string, locale?: string): Shown;
  minorUnits(currency: string): number | undefined;
};

describe('the pay sheet amount', () => {
  it('takes the minor units from the currency', () => {
    expect([minorUnits('VND'), minorUnits('JPY'), minorUnits('USD'), minorUnits('KWD')]).toEqual([0, 0, 2, 3]);
  });

  it("groups digits and shows the currency's minor units", () => {
    expect(formatAmount('125000', 'VND', 'en-US')).toEqual({ number: '125,000', currency: 'VND', excessDigits: false });
    expect(formatAmount('125000.00', 'VND', 'en-US')).toEqual({ number: '125,000', currency: 'VND', excessDigits: false });
    expect(formatAmount('1234.5', 'USD', 'en-US')).toEqual({ number: '1,234.50', currency: 'USD', excessDigits: false });
    expect(formatAmount('12.345', 'KWD', 'en-US')).toEqual({ number: '12.345', currency: 'KWD', excessDigits: false });
    expect(formatAmount('125000', 'VND', 'de-DE').number).toBe('125.000');
  });

  it('never rounds: digits the currency cannot carry are shown and flagged', () => {
    expect(formatAmount('125000.50', 'VND', 'en-US')).toEqual({ number: '125,000.50', currency: 'VND', excessDigits: true });
    expect(formatAmount('10.005', 'USD', 'en-US')).toEqual({ number: '10.005', currency: 'USD', excessDigits: true });
  });

  it('keeps every digit of amounts a float cannot hold', () => {
    expect(formatAmount('12345678901234567.89', 'USD', 'en-US').number).toBe('12,345,678,901,234,567.89');
  });

  it('shows an amount it cannot format as it was sent', () => {
    expect(formatAmount('125000', 'XXXX', 'en-US')).toEqual({ number: '125000', currency: 'XXXX', excessDigits: false });
  });
});
