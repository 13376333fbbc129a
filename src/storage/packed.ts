import { deflateRawSync, inflateRawSync } from 'node:zlib';

const PACKED = 'z1:';
/** Texts shorter than this are kept as they are; longer ones deflated at the fastest level. */
const PACK_FROM = 1024;
const DEFLATE = { level: 1 };

/**
 * Version rows keep whole texts that differ little from one to the next; stored deflated
 * (base64, behind a marker, so unpacked rows from before read as they are) they cost a
 * fraction of the writing and the space.
 */
export function packText(text: string): string {
  if (text.length < PACK_FROM) return text;
  return PACKED + deflateRawSync(Buffer.from(text, 'utf8'), DEFLATE).toString('base64');
}

export function unpackText(stored: string): string;
export function unpackText(stored: string | null): string | null;
export function unpackText(stored: string | null): string | null {
  if (stored === null || !stored.startsWith(PACKED)) return stored;
  return inflateRawSync(Buffer.from(stored.slice(PACKED.length), 'base64')).toString('utf8');
}
