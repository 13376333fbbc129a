import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MessageLines, TopLevelScanner } from './message-lines.ts';

/** Feeds `chunks` through a MessageLines with a `max`-byte limit; returns what passed and what was skipped. */
async function run(max: number, chunks: string[]) {
  const skipped: { id: string | number | null; bytes: number }[] = [];
  const lines = new MessageLines(max, (id, bytes) => skipped.push({ id, bytes }));
  const passed: string[] = [];
  lines.on('data', (chunk: Buffer) => passed.push(chunk.toString('utf8')));
  const ended = new Promise((resolve) => lines.on('end', resolve));
  for (const chunk of chunks) lines.write(Buffer.from(chunk, 'utf8'));
  lines.end();
  await ended;
  return { passed, skipped };
}

function idOf(message: string, split = 7): string | number | null {
  const scanner = new TopLevelScanner();
  const bytes = Buffer.from(message, 'utf8');
  for (let at = 0; at < bytes.length; at += split) scanner.feed(bytes.subarray(at, at + split));
  return scanner.id();
}

const call = (id: unknown, text: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: { text } } });

describe('MessageLines', () => {
  it('passes each line through whole, however the bytes arrive', async () => {
    const { passed, skipped } = await run(100, ['{"a":1}\n{"b"', ':2}\n', '{"c":3}\n{"d":4}\n']);
    assert.deepEqual(passed, ['{"a":1}\n', '{"b":2}\n', '{"c":3}\n', '{"d":4}\n']);
    assert.deepEqual(skipped, []);
  });

  it('skips a line over the limit, reports it with its id, and passes the next one', async () => {
    const big = call(7, 'x'.repeat(500));
    const { passed, skipped } = await run(100, [big.slice(0, 50), big.slice(50), '\n{"next":1}\n']);
    assert.deepEqual(passed, ['{"next":1}\n']);
    assert.deepEqual(skipped, [{ id: 7, bytes: Buffer.byteLength(big) }]);
  });

  it('passes a line of exactly the limit and skips one byte more', async () => {
    const { passed, skipped } = await run(10, ['0123456789\n', '0123456789a\n']);
    assert.deepEqual(passed, ['0123456789\n']);
    assert.deepEqual(skipped, [{ id: null, bytes: 11 }]);
  });

  it('reports an oversized last message without a newline', async () => {
    const { skipped } = await run(10, [call('req-1', 'long enough')]);
    assert.deepEqual(
      skipped.map((s) => s.id),
      ['req-1'],
    );
  });
});

describe('TopLevelScanner', () => {
  it('reads the top-level id of a request wherever it stands, not one nested inside', () => {
    assert.equal(idOf(call(42, 'a')), 42);
    assert.equal(idOf(call('abc', 'a')), 'abc');
    assert.equal(idOf('{"method":"x","params":{"id":5,"list":[{"id":6}]},"id":9}'), 9);
    assert.equal(idOf('{"params":{"s":"\\"id\\":3, \\\\"},"id":"q\\"x","method":"m"}'), 'q"x');
    assert.equal(idOf('{ "id" : 12 , "method" : "m" }'), 12);
  });

  it('answers null when the id cannot be read or the message is not a request', () => {
    assert.equal(idOf('{"jsonrpc":"2.0","method":"notifications/x","params":{}}'), null);
    assert.equal(idOf('{"jsonrpc":"2.0","id":3,"result":{}}'), null, 'a response is not answered');
    assert.equal(idOf('{"id":{"a":1},"method":"m"}'), null);
    assert.equal(idOf(`{"id":"${'x'.repeat(300)}","method":"m"}`), null);
    assert.equal(idOf('[{"id":1,"method":"m"}]'), null);
    assert.equal(idOf('not json {"id":1,"method":"m"}'), null);
    assert.equal(idOf('{"id":1,"method":"m"'), 1, 'a message cut short still names its id');
  });

  it('reads the same id however the message is split', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer(), fc.string({ maxLength: 20 })),
        fc.string({ maxLength: 40 }),
        fc.integer({ min: 1, max: 30 }),
        (id, text, split) => assert.equal(idOf(call(id, text), split), id),
      ),
      { numRuns: 300 },
    );
  });
});
