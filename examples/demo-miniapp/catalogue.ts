/**
 * What the demo shop sells. Prices live on the server: the page only names a product, so a user
 * cannot change the amount that E1 sends. Amounts are decimal strings, never floats.
 */
export interface Product {
  sku: string;
  name: string;
  amount: string;
  currency: string;
  /**
   * Whether the result page's server asks the platform (E2) while the payment is in process.
   * Off, it only waits for E6: the platform asks the host app itself when no E5 comes (reconciliation).
   */
  askWithE2?: boolean;
}

export const DEFAULT_CATALOGUE: readonly Product[] = [
  { sku: 'coffee-1kg', name: 'Coffee beans, 1 kg', amount: '125000', currency: 'VND' },
  { sku: 'tea-box', name: 'Green tea, 50 bags', amount: '89000', currency: 'VND' },
  // A sandbox magic amount: the host app marks it paid without calling E5, so the result page
  // learns the outcome by asking E2 (and E6 follows).
  { sku: 'sandbox-no-e5', name: 'Sandbox: paid, found through E2', amount: '4000.05', currency: 'VND', askWithE2: true },
  // The same, but the page never asks: within the sandbox host app's 10 s reconcile delay the
  // platform asks the host app itself (E4) and sends E6.
  {
    sku: 'sandbox-reconciled',
    name: 'Sandbox: paid, never reported; the platform finds out',
    amount: '4000.05',
    currency: 'VND',
    askWithE2: false,
  },
];
