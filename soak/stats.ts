/** Latencies kept per name, summarised as count, p50 and p99. */
export class Timings {
  private readonly samples = new Map<string, number[]>();

  add(name: string, ms: number) {
    let list = this.samples.get(name);
    if (!list) this.samples.set(name, (list = []));
    list.push(ms);
  }

  names(): string[] {
    return [...this.samples.keys()].sort();
  }

  summary(name: string): { count: number; p50: number; p99: number } {
    const list = [...(this.samples.get(name) ?? [])].sort((a, b) => a - b);
    const at = (q: number) => list[Math.min(list.length - 1, Math.floor(q * list.length))] ?? NaN;
    return { count: list.length, p50: at(0.5), p99: at(0.99) };
  }
}

export const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 1 : 0)} ms` : '-');
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
