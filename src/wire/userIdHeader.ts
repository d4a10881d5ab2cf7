/**
 * How `order.hostapp_user_id` (any string of up to 250 characters, as the spec gives it) travels
 * in the `X-User-ID` header of E3 and E4 (ADR 0016): its UTF-8 bytes, each byte outside visible
 * ASCII (`!` to `~`) and `%` itself written as `%XX` (RFC 3986 percent-encoding, upper-case hex).
 * A reference made only of visible ASCII without `%` travels unchanged; every other value has
 * exactly one encoded form, and decoding gives back the exact string.
 */
export function encodeUserIdHeader(userId: string): string {
  let encoded = '';
  for (const byte of Buffer.from(userId, 'utf8')) {
    encoded +=
      byte >= 0x21 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The user reference an `X-User-ID` header carries. Throws a TypeError naming the problem when
 * the value is not an encoding `encodeUserIdHeader` can produce (a stray `%`, lower-case or
 * missing hex digits, a byte that should have been encoded, or bytes that are not UTF-8).
 */
export function decodeUserIdHeader(header: string): string {
  const bytes: number[] = [];
  for (let index = 0; index < header.length; index++) {
    const code = header.charCodeAt(index);
    if (code === 0x25) {
      const hex = header.slice(index + 1, index + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) throw new TypeError(`X-User-ID has a "%" at ${index} not followed by two upper-case hex digits`);
      bytes.push(Number.parseInt(hex, 16));
      index += 2;
    } else if (code >= 0x21 && code <= 0x7e) {
      bytes.push(code);
    } else {
      throw new TypeError(`X-User-ID has a character at ${index} that must be percent-encoded`);
    }
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new TypeError('X-User-ID does not decode to UTF-8 text');
  }
}
