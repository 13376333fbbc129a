import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The pages origin shares no cookies with the app, so the app hands the frame a short-lived
 * signed link naming one page version; the pages origin serves only what a link names.
 */
export function pageLinkSigner(secret: Buffer, ttlMs = 10 * 60_000) {
  const mac = (id: string, version: number, exp: number) =>
    createHmac('sha256', secret).update(`${id}\n${version}\n${exp}`).digest('base64url');
  return {
    sign(id: string, version: number, now = Date.now()) {
      const exp = now + ttlMs;
      return `/view/${encodeURIComponent(id)}?v=${version}&exp=${exp}&sig=${mac(id, version, exp)}`;
    },
    verify(id: string, version: number, exp: number, sig: string, now = Date.now()): boolean {
      if (!Number.isFinite(exp) || exp < now || !Number.isInteger(version)) return false;
      const want = Buffer.from(mac(id, version, exp));
      const got = Buffer.from(sig);
      return want.length === got.length && timingSafeEqual(want, got);
    },
  };
}

export type PageLinkSigner = ReturnType<typeof pageLinkSigner>;
