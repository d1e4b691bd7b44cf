/**
 * Cutting captured output at a byte cap without splitting a UTF-8 character: a character cut in
 * half would decode to U+FFFD at the end of `stdout`, a character the program never printed.
 */

/**
 * Length of the longest prefix of `bytes` that does not end inside a multi-byte UTF-8 character:
 * `bytes.length` minus the 1 to 3 bytes of an incomplete character at the end, if there is one.
 * Bytes that are not UTF-8 at all (a stray continuation byte, an invalid lead byte) are kept as
 * they are: only a character the cut itself broke is dropped.
 * @param bytes - the kept head of a longer output.
 * @returns a byte length, `bytes.length - 3 .. bytes.length`.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  const end = bytes.length;
  // Walk back over at most 3 continuation bytes (10xxxxxx) to the character's lead byte.
  let lead = end - 1;
  while (lead >= 0 && end - lead <= 3 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0 || (bytes[lead]! & 0xc0) === 0x80) return end;
  const byte = bytes[lead]!;
  const size = byte < 0x80 ? 1 : (byte & 0xe0) === 0xc0 ? 2 : (byte & 0xf0) === 0xe0 ? 3 : (byte & 0xf8) === 0xf0 ? 4 : 0;
  if (size === 0) return end;
  return lead + size > end ? lead : end;
}

/**
 * The head of an output cut at a cap: `bytes` itself when nothing was cut, else without a trailing
 * incomplete UTF-8 character (a view, not a copy).
 * @param truncated - true when the output was longer than `bytes`.
 */
export function cutAtCharacter(bytes: Uint8Array, truncated: boolean): Uint8Array {
  if (!truncated) return bytes;
  const length = completeUtf8Length(bytes);
  return length === bytes.length ? bytes : bytes.subarray(0, length);
}
