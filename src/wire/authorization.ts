/**
 * The `Authorization` values partners and the platform send, written with the web platform's own
 * `TextEncoder` and `btoa` rather than Node's buffers: the typed client (`@minibridge/client`)
 * ships this module and runs wherever `fetch` does (Node, Deno, Bun, browsers, edge workers).
 */

/** `Basic base64(id:secret)`, as the platform sends it to miniapps (E6, E7). */
export function basicAuthorization(id: string, secret: string): string {
  return `Basic ${base64Utf8(`${id}:${secret}`)}`;
}

/** `<prefix> base64(id:secret)`, as host apps and the platform exchange it (E3, E4, E7, E8). */
export function prefixedAuthorization(prefix: string, id: string, secret: string): string {
  return `${prefix} ${base64Utf8(`${id}:${secret}`)}`;
}

/** Base64 of the text's UTF-8 bytes (RFC 7617 §2.1: ids and secrets are UTF-8). */
function base64Utf8(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
