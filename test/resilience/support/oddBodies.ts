/**
 * A request body the contract never describes: bytes and the Content-Type they are sent with.
 * The bytes are made on demand: some are over 1 MiB, and a fuzz run picks one body of the list.
 */
export interface OddBody {
  label: string;
  bytes: () => Uint8Array;
  contentType: string | undefined;
}

const JSON_TYPE = 'application/json';

/** Inserts `extra` (JSON text of a member) as the first member of the object `text`. */
function withMember(text: string, member: string): string {
  return `{${member},${text.slice(1)}`;
}

/**
 * Malformed JSON and odd encodings of a valid body `text` (a JSON object): byte-order marks,
 * UTF-16, invalid UTF-8, truncation, trailing bytes, non-object JSON, huge numbers, deep nesting,
 * duplicate keys, wrong or missing Content-Type, a body past the 1 MiB limit.
 */
export function oddBodies(text: string): OddBody[] {
  const utf8 = (value: () => string, contentType: string | undefined = JSON_TYPE) => ({
    bytes: () => Buffer.from(value(), 'utf8'),
    contentType,
  });
  const insideFirstString = text.indexOf('":"') + 3;
  const depth = 100_000;
  const bodies: OddBody[] = [
    {
      label: 'UTF-8 byte-order mark',
      bytes: () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
      contentType: JSON_TYPE,
    },
    { label: 'UTF-16LE with BOM, declared as JSON', bytes: () => Buffer.from(`\ufeff${text}`, 'utf16le'), contentType: JSON_TYPE },
    { label: 'UTF-16LE, charset=utf-16', bytes: () => Buffer.from(text, 'utf16le'), contentType: `${JSON_TYPE}; charset=utf-16` },
    { label: 'truncated', ...utf8(() => text.slice(0, Math.floor(text.length / 2))) },
    { label: 'trailing garbage', ...utf8(() => `${text}x`) },
    { label: 'two objects', ...utf8(() => `${text}${text}`) },
    { label: 'empty body', ...utf8(() => '') },
    { label: 'whitespace only', ...utf8(() => ' \n\t ') },
    { label: 'JSON null', ...utf8(() => 'null') },
    { label: 'JSON array', ...utf8(() => `[${text}]`) },
    { label: 'JSON string', ...utf8(() => '"hello"') },
    { label: 'JSON number', ...utf8(() => '42') },
    { label: 'single quotes', ...utf8(() => text.replaceAll('"', "'")) },
    { label: 'huge exponent number member', ...utf8(() => withMember(text, '"zz_huge":1e400')) },
    { label: 'huge 400-digit number member', ...utf8(() => withMember(text, `"zz_huge":1${'0'.repeat(400)}`)) },
    { label: `nesting ${depth} deep`, ...utf8(() => withMember(text, `"zz_deep":${'['.repeat(depth)}${']'.repeat(depth)}`)) },
    { label: 'nesting 2000 deep objects', ...utf8(() => withMember(text, `"zz_deep":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`)) },
    { label: 'duplicate first key', ...utf8(() => withMember(text, text.slice(1, text.indexOf(',')).replace(/:"/, ':"x'))) },
    { label: 'Content-Type text/plain', ...utf8(() => text, 'text/plain') },
    { label: 'no Content-Type', ...utf8(() => text, undefined) },
    { label: 'charset=latin1', ...utf8(() => text, `${JSON_TYPE}; charset=latin1`) },
    { label: 'Content-Type application/xml', ...utf8(() => text, 'application/xml') },
    { label: 'Content-Type with charset=UTF-8 (allowed)', ...utf8(() => text, `${JSON_TYPE}; charset=UTF-8`) },
    { label: 'larger than 1 MiB', ...utf8(() => withMember(text, `"zz_big":"${'a'.repeat(1024 * 1024 + 10)}"`)) },
  ];
  if (insideFirstString > 2) {
    const at = insideFirstString;
    bodies.push(
      {
        label: 'invalid UTF-8 inside a string',
        bytes: () => Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(at))]),
        contentType: JSON_TYPE,
      },
      {
        label: 'overlong UTF-8 inside a string',
        bytes: () => Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xc0, 0xaf]), Buffer.from(text.slice(at))]),
        contentType: JSON_TYPE,
      },
      { label: 'lone surrogate escape inside a string', ...utf8(() => `${text.slice(0, at)}\\ud800${text.slice(at)}`) },
      { label: 'NUL escape inside a string', ...utf8(() => `${text.slice(0, at)}\\u0000${text.slice(at)}`) },
      { label: 'raw control character inside a string', ...utf8(() => `${text.slice(0, at)}\u0001${text.slice(at)}`) },
    );
  }
  return bodies;
}
