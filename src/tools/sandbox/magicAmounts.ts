import type { components } from '../../../generated/types/platform.js';

type PaymentStatus = components['schemas']['PaymentStatus'];
type ErrorCode = components['schemas']['ErrorCode'];

/** What the simulated host app does with a payment when it is confirmed. */
export interface Confirmation {
  status: PaymentStatus;
  failReason?: string;
  /** Whether the host app reports the outcome with E5; without it the platform learns it only through E2 → E4. */
  callsCompleteOrder: boolean;
}

/**
 * Test-mode amounts: an order whose `order.amount` is exactly one of these makes the simulated
 * host app behave as listed, so every branch of the flow can be tried from a plain E1 request.
 * The docs tables (src/tools/sandbox/README.md, the onboarding guide) are rendered from this list by
 * magicAmountsTable(); a test keeps the README in step.
 */
export const MAGIC_AMOUNTS: ReadonlyArray<{
  amount: string;
  /** E3 answers this error_code instead of creating the payment. */
  refuseWith?: ErrorCode;
  confirmation?: Confirmation;
  hostappDoes: string;
  miniappSees: string;
}> = [
  {
    amount: '4000.01',
    refuseWith: 'INVALID_ORDER_DATA',
    hostappDoes: 'E3 refuses the order with `error_code: INVALID_ORDER_DATA`',
    miniappSees: 'E1 answers HTTP 400 `INVALID_ORDER_DATA`; no payment exists',
  },
  {
    amount: '4000.02',
    confirmation: { status: 'failed', failReason: 'Insufficient balance (sandbox amount 4000.02)', callsCompleteOrder: true },
    hostappDoes: 'on confirm, the payment fails and E5 reports `failed` with a `payment_fail_reason`',
    miniappSees: 'E6 with `payment_status: failed` and the reason',
  },
  {
    amount: '4000.03',
    confirmation: { status: 'cancelled', callsCompleteOrder: true },
    hostappDoes: 'on confirm, the user cancels and E5 reports `cancelled`',
    miniappSees: 'E6 with `payment_status: cancelled`',
  },
  {
    amount: '4000.04',
    confirmation: { status: 'in_process', callsCompleteOrder: false },
    hostappDoes: 'on confirm, the payment stays `in_process` for good, even past its expiry; no E5',
    miniappSees:
      'no E6; E2 answers `in_process`; after its `expires_at` the payment is stuck: listed in the dashboard (`stuck=true`), asked about slowly, never decided by the platform',
  },
  {
    amount: '4000.05',
    confirmation: { status: 'paid', callsCompleteOrder: false },
    hostappDoes: 'on confirm, the payment is `paid` but the host app never calls E5',
    miniappSees:
      "E6 all the same: 10 s after creation (the sandbox host app's `reconcile_after_seconds`) the platform asks E4 itself, learns `paid` and sends E6; an E2 before then learns it the same way",
  },
];

/** Any other amount: paid on confirm, reported with E5. Never confirmed: cancelled at its expiry, which E4 reports. */
export const DEFAULT_CONFIRMATION: Confirmation = { status: 'paid', callsCompleteOrder: true };

/** The error code E3 answers for this amount, if it is a refusing magic amount. */
export function refusalFor(amountText: string): ErrorCode | undefined {
  return find(amountText)?.refuseWith;
}

/** What confirming a payment of this amount does. */
export function confirmationFor(amountText: string): Confirmation {
  return find(amountText)?.confirmation ?? DEFAULT_CONFIRMATION;
}

/** The magic amounts as a Markdown table, for the docs. */
export function magicAmountsTable(): string {
  const rows = MAGIC_AMOUNTS.map((entry) => `| \`${entry.amount}\` | ${entry.hostappDoes} | ${entry.miniappSees} |`);
  return [
    '| `order.amount` | The simulated host app | The miniapp server sees |',
    '| --- | --- | --- |',
    ...rows,
    '| any other | on confirm, the payment is `paid` and E5 reports it; never confirmed, it is closed (`cancelled`) at its `expires_at` | E6 with `payment_status: paid`; or, never confirmed, E6 `cancelled` after the platform asks at expiry |',
  ].join('\n');
}

/** The magic amounts as plain text lines, for a terminal. */
export function magicAmountsLines(indent = '  '): string {
  const plain = (text: string) => text.replace(/`/g, '');
  return [
    ...MAGIC_AMOUNTS.map((entry) => `${indent}${entry.amount}  ${plain(entry.hostappDoes)}`),
    `${indent}other    paid on confirm, reported with E5`,
  ].join('\n');
}

function find(amountText: string) {
  const wanted = normalize(amountText);
  return MAGIC_AMOUNTS.find((entry) => normalize(entry.amount) === wanted);
}

/** `4000.20`, `4000.2` and `"4000.2"` are one amount; trailing fraction zeros do not count. */
function normalize(amountText: string): string {
  return amountText.includes('.') ? amountText.replace(/0+$/, '').replace(/\.$/, '') : amountText;
}
