import * as Y from 'yjs';

/**
 * What a block must be, judged on the block as it stands: a `Y.Map` with a non-empty string
 * `id` and a `Y.Text` `text`; besides them plain values only; its text characters, formatting and
 * embeds. The person gate judges the blocks an update touches with it; reads and loads use
 * `wellFormed` to skip or repair what storage holds from before the gate.
 */

/** The longest block id a client may choose. */
export const MAX_ID_CHARS = 200;

/** What a block weighs: its text's characters, and what formatting, embeds and values add. */
export interface BlockWeight {
  chars: number;
  /** Characters of JSON: formatting attributes, embeds, plain values besides id and text. */
  extra: number;
}

/** Why a block is not a block; null when it is one. */
export function shapeProblem(value: unknown): string | null {
  if (!(value instanceof Y.Map)) return 'a block must be a map';
  const id: unknown = value.get('id');
  if (id === undefined) return 'a block has no id';
  if (typeof id !== 'string' || id === '' || id.length > MAX_ID_CHARS) {
    return `a block id must be a non-empty string of at most ${MAX_ID_CHARS} characters`;
  }
  const text: unknown = value.get('text');
  if (text === undefined) return 'a block has no text';
  if (!(text instanceof Y.Text)) return "a block's text must be a Y.Text";
  return null;
}

/** Whether a value of the blocks array can be read as a block. */
export function wellFormed(value: unknown): value is Y.Map<unknown> {
  return shapeProblem(value) === null;
}

const jsonLength = (value: unknown): number => {
  try {
    return JSON.stringify(value ?? null)?.length ?? 0;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
};

/**
 * A well-shaped block's weight, walking its keys and its text's items; or why what it holds
 * is not allowed (a type where plain values go, anything but characters, formatting and embeds
 * in the text, keys on the text).
 */
export function weighBlock(map: Y.Map<unknown>): BlockWeight | string {
  const shape = shapeProblem(map);
  if (shape) return shape;
  let extra = 0;
  for (const [key, item] of map._map) {
    if (item.deleted || key === 'id' || key === 'text') continue;
    if (!(item.content instanceof Y.ContentAny)) return 'a block holds plain values besides its text';
    extra += key.length + jsonLength(item.content.arr);
  }
  const text = map.get('text') as Y.Text;
  for (const item of text._map.values()) if (!item.deleted) return 'a text has no keys';
  let chars = 0;
  for (let item = text._start; item !== null; item = item.right) {
    if (item.deleted) continue;
    const content = item.content;
    if (content instanceof Y.ContentString) {
      // As every tool argument: no U+0000 (PostgreSQL text cannot hold it; editors send U+FFFD).
      if (content.str.includes('\u0000')) return "a block's text cannot hold U+0000";
      chars += content.str.length;
    } else if (content instanceof Y.ContentFormat) extra += content.key.length + jsonLength(content.value);
    else if (content instanceof Y.ContentEmbed) extra += 1 + jsonLength(content.embed);
    else return "a block's text holds characters, formatting and embeds only";
  }
  return { chars, extra };
}

/** The weight a bound counts. */
export const weightOf = (w: BlockWeight): number => w.chars + w.extra;

const noted = new WeakSet<object>();

/** Logs one line for a malformed block found in a document, once per block. */
export function noteMalformed(documentId: string, block: unknown, action: string): void {
  const key = typeof block === 'object' && block !== null ? block : null;
  if (key) {
    if (noted.has(key)) return;
    noted.add(key);
  }
  console.warn(
    `document ${documentId}: a malformed block (${shapeProblem(block) ?? 'unreadable'}) was ${action}`,
  );
}
