import { Transform, type TransformCallback } from 'node:stream';

/**
 * The longest message `tandem mcp` reads. The largest call the tools accept holds 10,000,000
 * characters of arguments (`MAX_ARGUMENT_CHARS`), at most 3 bytes each in UTF-8, plus its
 * envelope; anything longer is answered with an error and skipped, without being held whole.
 */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longer than any id a client sends; an id past this reads as unknown. */
const MAX_ID_BYTES = 200;

/**
 * Reads, byte by byte and holding almost nothing, the top-level `id` of a JSON-RPC message too
 * large to parse, and whether it is a request (has a `method`), so the error can answer it.
 */
export class TopLevelScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private inKey = false;
  private key: number[] = [];
  private lastKey = '';
  private value: number[] | undefined;
  private valueTooLong = false;
  private broken = false;
  private idBytes: number[] | undefined;
  private sawMethod = false;

  feed(bytes: Uint8Array): void {
    for (const b of bytes) {
      if (this.broken) return;
      if (this.value) {
        if (this.value.length < MAX_ID_BYTES) this.value.push(b);
        else this.valueTooLong = true;
      }
      if (this.inString) this.inStringByte(b);
      else this.structuralByte(b);
    }
  }

  private inStringByte(b: number): void {
    if (this.escaped) this.escaped = false;
    else if (b === BACKSLASH) this.escaped = true;
    else if (b === QUOTE) {
      this.inString = false;
      if (this.inKey) {
        this.inKey = false;
        this.lastKey = Buffer.from(this.key).toString('latin1');
        if (this.lastKey === 'method') this.sawMethod = true;
      }
      return;
    }
    if (this.inKey && this.key.length <= 8) this.key.push(b);
  }

  private structuralByte(b: number): void {
    switch (b) {
      case QUOTE:
        this.inString = true;
        if (this.depth === 1 && this.expectKey) {
          this.inKey = true;
          this.expectKey = false;
          this.key = [];
        }
        return;
      case 0x7b: // {
      case 0x5b: // [
        if (this.depth === 0 && b !== 0x7b) this.broken = true;
        if (this.depth === 0) this.expectKey = true;
        this.depth++;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.depth === 1) this.endValue(b);
        this.depth--;
        return;
      case 0x3a: // :
        if (this.depth === 1 && this.lastKey === 'id') {
          this.value = [];
          this.valueTooLong = false;
        }
        return;
      case 0x2c: // ,
        if (this.depth === 1) {
          this.endValue(b);
          this.expectKey = true;
        }
        return;
      default:
        if (this.depth === 0 && b > 0x20) this.broken = true;
    }
  }

  private endValue(terminator: number): void {
    if (this.value) {
      // The terminator was taken in with the value; the value is what came before it.
      this.idBytes = this.valueTooLong
        ? undefined
        : this.value.at(-1) === terminator
          ? this.value.slice(0, -1)
          : this.value;
      this.value = undefined;
    }
    this.lastKey = '';
  }

  /** The request's id, or null when it is not a request or its id cannot be read. */
  id(): string | number | null {
    if (this.broken || !this.sawMethod || !this.idBytes) return null;
    try {
      const id: unknown = JSON.parse(Buffer.from(this.idBytes).toString('utf8'));
      return typeof id === 'string' || typeof id === 'number' ? id : null;
    } catch {
      return null;
    }
  }
}

/**
 * Passes newline-delimited messages through whole, one line per chunk, and skips any line longer
 * than `maxBytes` as it streams past (reading only its id), reporting it to `onOversized`. The
 * connection stays usable: the next line is read as usual.
 */
export class MessageLines extends Transform {
  private readonly maxBytes: number;
  private readonly onOversized: (id: string | number | null, bytes: number) => void;
  private pending: Buffer[] = [];
  private bytes = 0;
  private skipping: TopLevelScanner | undefined;

  constructor(maxBytes: number, onOversized: (id: string | number | null, bytes: number) => void) {
    super();
    this.maxBytes = maxBytes;
    this.onOversized = onOversized;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, newline < 0 ? chunk.length : newline);
      this.hold(piece);
      if (newline < 0) break;
      this.endLine(true);
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.skipping || this.bytes > 0) this.endLine(false);
    done();
  }

  private hold(piece: Buffer): void {
    this.bytes += piece.length;
    if (this.skipping) {
      this.skipping.feed(piece);
      return;
    }
    this.pending.push(piece);
    if (this.bytes <= this.maxBytes) return;
    this.skipping = new TopLevelScanner();
    for (const held of this.pending) this.skipping.feed(held);
    this.pending = [];
  }

  private endLine(complete: boolean): void {
    if (this.skipping) this.onOversized(this.skipping.id(), this.bytes);
    else if (complete) this.push(Buffer.concat([...this.pending, Buffer.from('\n')]));
    else this.push(Buffer.concat(this.pending));
    this.pending = [];
    this.bytes = 0;
    this.skipping = undefined;
  }
}
