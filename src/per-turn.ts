/**
 * Calls made in the same turn of the event loop, sent as one: `send` gets every item asked for in
 * the turn and answers each, in order; an `Error` in its place fails that call alone. If `send`
 * throws, every call of the batch fails with it.
 */
export function perTurn<I, O>(send: (items: I[]) => Promise<(O | Error)[]>): (item: I) => Promise<O> {
  let asked: { item: I; answer: (o: O) => void; fail: (e: unknown) => void }[] = [];
  async function sendAsked(): Promise<void> {
    const batch = asked;
    asked = [];
    try {
      const answers = await send(batch.map((b) => b.item));
      batch.forEach(({ answer, fail }, i) => {
        const a = answers[i] as O | Error;
        if (a instanceof Error) fail(a);
        else answer(a);
      });
    } catch (error) {
      for (const { fail } of batch) fail(error);
    }
  }
  return (item) =>
    new Promise<O>((answer, fail) => {
      asked.push({ item, answer, fail });
      if (asked.length === 1) setImmediate(() => void sendAsked());
    });
}
