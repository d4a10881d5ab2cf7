/**
 * What the demo shop sells. Prices live on the server: the page only names a product, so a user
 * cannot change the amount that E1 sends. Amounts are decimal strings, never floats.
 */
export interface Product {
  sku: string;
  name: string;
  amount: string;
  currency: string;
}

export const DEFAULT_CATALOGUE: readonly Product[] = [
  { sku: 'coffee-1kg', name: 'Coffee beans, 1 kg', amount: '125000', currency: 'VND' },
  { sku: 'tea-box', name: 'Green tea, 50 bags', amount: '89000', currency: 'VND' },
  // A sandbox magic amount: the host app marks it paid without calling E5, so the result page
  // learns the outcome by asking E2 (and E6 follows).
  { sku: 'sandbox-no-e5', name: 'Sandbox: paid, found through E2', amount: '4000.05', currency: 'VND' },
];
