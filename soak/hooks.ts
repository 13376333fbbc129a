/**
 * Signed connector events arriving at the webhook door through the proxy, one at a time at a
 * steady rate; now and then the same signed event is sent again, which must start nothing.
 */
import { createHmac } from 'node:crypto';
import { HOOK_EVENT, HOOK_SECRET } from './seed.ts';
import type { Timings } from './stats.ts';
import { sleep } from './stats.ts';

export class HookSender {
  readonly acked: number[] = [];
  readonly unknown: number[] = [];
  duplicatesSent = 0;
  duplicatesThatRan = 0;
  private stopped = false;
  private n = 0;

  private readonly url: string;
  private readonly workspaceId: string;
  private readonly everyMs: number;
  private readonly timings: Timings;

  constructor(url: string, workspaceId: string, everyMs: number, timings: Timings) {
    this.url = url;
    this.workspaceId = workspaceId;
    this.everyMs = everyMs;
    this.timings = timings;
  }

  private async send(
    body: string,
    timestamp: number,
  ): Promise<{ status: number; runs: string[]; duplicate: boolean }> {
    const signature = createHmac('sha256', HOOK_SECRET).update(`${timestamp}.${body}`).digest('hex');
    const started = performance.now();
    const res = await fetch(`${this.url}/hooks/connectors/${this.workspaceId}/slack`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-tandem-timestamp': String(timestamp),
        'x-tandem-signature-256': `sha256=${signature}`,
      },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await res.json().catch(() => ({}))) as { runs?: string[]; duplicate?: boolean };
    this.timings.add('webhook', performance.now() - started);
    return { status: res.status, runs: answer.runs ?? [], duplicate: answer.duplicate === true };
  }

  async loop() {
    while (!this.stopped) {
      const n = ++this.n;
      const body = JSON.stringify({ event: HOOK_EVENT, data: { n } });
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const first = await this.send(body, timestamp);
        if (first.status === 202 && first.runs.length === 1) this.acked.push(n);
        else this.unknown.push(n);
        if (first.status === 202 && n % 20 === 0) {
          this.duplicatesSent++;
          const again = await this.send(body, timestamp);
          if (again.runs.length > 0) this.duplicatesThatRan++;
        }
      } catch {
        this.unknown.push(n);
      }
      await sleep(this.everyMs);
    }
  }

  stop() {
    this.stopped = true;
  }
}
