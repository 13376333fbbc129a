import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { perTurn } from './per-turn.ts';

describe('calls sent together per turn of the event loop', () => {
  it('sends the calls of one turn as one batch and answers each in order, failing only the refused', async () => {
    const sent: number[][] = [];
    const double = perTurn(async (items: number[]) => {
      sent.push(items);
      return items.map((n) => (n < 0 ? new Error(`${n} is negative`) : n * 2));
    });
    const answers = await Promise.allSettled([double(1), double(-2), double(3)]);
    assert.deepEqual(sent, [[1, -2, 3]]);
    assert.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message)),
      [2, '-2 is negative', 6],
    );
    assert.equal(await double(4), 8);
    assert.deepEqual(sent, [[1, -2, 3], [4]], 'a later turn is a batch of its own');
  });

  it('fails every call of a batch whose sending fails, and sends the next batch afresh', async () => {
    let down = true;
    const echo = perTurn(async (items: string[]) => {
      if (down) throw new Error('the database is unreachable');
      return items;
    });
    const failed = await Promise.allSettled([echo('a'), echo('b')]);
    assert.deepEqual(
      failed.map((f) => f.status === 'rejected' && (f.reason as Error).message),
      ['the database is unreachable', 'the database is unreachable'],
    );
    down = false;
    assert.equal(await echo('c'), 'c');
  });
});
