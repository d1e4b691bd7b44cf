/**
 * The size of a PNG read from its header, before anything is decoded. A baseline PNG may come from
 * someone else: 900 KB of zlib can claim 30000x30000 pixels and decode to gigabytes, synchronously,
 * where no deadline can stop it. Screenshot comparison reads the header first and refuses such
 * images.
 */

/** Most pixels one image of a screenshot comparison may have (decoded RGBA: 4 bytes each, 256 MiB). */
export const SCREENSHOT_MAX_PIXELS = 64 * 1024 * 1024;

/** What a PNG header says: size in pixels, and whether the rows are interlaced (Adam7). */
export interface PngHeader {
  width: number;
  height: number;
  interlaced: boolean;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Signature (8) + IHDR length (4) + "IHDR" (4) + width, height (8) + depth, colour, compression, filter, interlace (5). */
const PNG_HEADER_BYTES = 33;

/**
 * Reads a PNG's IHDR chunk (the first chunk, right after the signature).
 * @param bytes - the file, or at least its first 33 bytes.
 * @returns the header, or undefined when the bytes are not a PNG (wrong signature, no IHDR first,
 *   a zero width or height).
 */
export function readPngHeader(bytes: Uint8Array): PngHeader | undefined {
  if (bytes.byteLength < PNG_HEADER_BYTES) return undefined;
  if (PNG_SIGNATURE.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13 || String.fromCharCode(bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!) !== "IHDR") return undefined;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width === 0 || height === 0) return undefined;
  return { width, height, interlaced: bytes[28] !== 0 };
}

/**
 * Why an image cannot take part in a screenshot comparison, or undefined when it can.
 * @param bytes - the PNG file's bytes, all of them (chunk headers are walked; nothing is inflated).
 * @param what - how the message names the image ("the baseline baselines/home.png").
 * @param maxPixels - default {@link SCREENSHOT_MAX_PIXELS}.
 * @returns a sentence: not a PNG; zero width or height; interlaced (decoding those is not bounded
 *   by the image size, and Chromium never writes them); more pixels than `maxPixels`; or chunks that
 *   do not fit the file or hold no image data.
 */
export function screenshotImageProblem(bytes: Uint8Array, what: string, maxPixels: number = SCREENSHOT_MAX_PIXELS): string | undefined {
  const header = readPngHeader(bytes);
  if (!header) {
    const size = zeroSize(bytes);
    if (size) return `${what} is a ${size} PNG: an image needs at least one pixel; delete it and write it with --update-baselines`;
    return `${what} is not a PNG file (no PNG signature and IHDR header)`;
  }
  if (header.interlaced) return `${what} is an interlaced PNG; save it without interlacing, or delete it and write it with --update-baselines`;
  const pixels = header.width * header.height;
  if (pixels > maxPixels) return `${what} is ${header.width}x${header.height} pixels (${pixels}), more than the ${maxPixels} a screenshot comparison decodes; delete it and write it with --update-baselines`;
  const structure = chunkProblem(bytes);
  if (structure) return `${what} is not a complete PNG (${structure}); delete it and write it with --update-baselines`;
  return undefined;
}

/** "0x10" when the bytes are a PNG header that says zero width or height, else undefined. */
function zeroSize(bytes: Uint8Array): string | undefined {
  if (bytes.byteLength < PNG_HEADER_BYTES || PNG_SIGNATURE.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(8) !== 13 || String.fromCharCode(bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!) !== "IHDR") return undefined;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  return width === 0 || height === 0 ? `${width}x${height}` : undefined;
}

/**
 * Walks the chunks after the signature (length, type, data, CRC each) without inflating anything:
 * a file cut short or holding no image data passes the header check but cannot be decoded, and
 * that must be said before the run, not as a decoder's error in the middle of it.
 * @returns what is wrong, or undefined when the chunks fit the file and include IDAT and IEND.
 */
function chunkProblem(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = PNG_SIGNATURE.length;
  let imageData = false;
  while (offset + 8 <= bytes.byteLength) {
    const length = view.getUint32(offset);
    const type = String.fromCharCode(bytes[offset + 4]!, bytes[offset + 5]!, bytes[offset + 6]!, bytes[offset + 7]!);
    if (offset + 12 + length > bytes.byteLength) return `its ${type} chunk runs past the end of the file`;
    if (type === "IDAT") imageData = true;
    if (type === "IEND") return imageData ? undefined : "it has no image data (IDAT)";
    offset += 12 + length;
  }
  return imageData ? "it ends without an IEND chunk" : "it has no image data (IDAT)";
}
