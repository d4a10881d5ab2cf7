// How the simulator's payment sheet shows an amount (ADR 0018): formatted for the currency with
// Intl.NumberFormat (grouping, and the currency's minor units: none for VND or JPY, two for USD,
// three for KWD), from the amount's exact decimal text, never through a float. Digits beyond the
// currency's minor units are never rounded away: the sheet shows what the miniapp asked for and
// says that it cannot be charged as it is.

/** The number of minor units of an ISO 4217 currency, as Intl knows it; undefined if unknown. */
export function minorUnits(currency) {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;
  } catch {
    return undefined;
  }
}

/**
 * `{ number, currency, excessDigits }` for an amount (decimal string or number) in a currency:
 * `number` grouped and with the currency's minor units, in the reader's locale; `excessDigits`
 * true when the amount has non-zero digits the currency's minor units cannot carry.
 */
export function formatAmount(amount, currency, locale) {
  const text = String(amount).trim();
  const minor = minorUnits(currency);
  if (minor === undefined || !/^-?\d+(\.\d+)?$/.test(text)) return { number: text, currency, excessDigits: false };
  const written = text.split('.')[1] ?? '';
  const excessDigits = written.replace(/0+$/, '').length > minor;
  // With digits to spare, as many as the currency has; otherwise every digit as written.
  const digits = excessDigits ? written.length : minor;
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    currencyDisplay: 'code',
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  // A string keeps every digit (Intl.NumberFormat v3 formats decimal strings exactly).
  const number = format
    .formatToParts(text)
    .filter((part) => part.type !== 'currency')
    .map((part) => part.value)
    .join('')
    .trim();
  return { number, currency, excessDigits };
}
