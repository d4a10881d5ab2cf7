/**
 * Ids a caller chooses for given rows instead of random ones: the sandbox gives the E6 delivery
 * and the credential its request samples name the ids the samples use, so that they run as
 * written (ADR 0043). A row no pin covers (undefined) gets a random UUID, and so does a
 * credential whose pinned id is taken; a payment reaches a status once, so a delivery's pin
 * (payment and status) matches once.
 */
export interface PinnedIds {
  delivery?(row: { client_id: string; order_payment_id: string; payment_status: string }): string | undefined;
  credential?(row: { partner_type: string; partner_id: string; kind: string; origin: string }): string | undefined;
}
