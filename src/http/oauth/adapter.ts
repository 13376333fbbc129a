import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { OAuthRecords, Payload } from '../../domains/auth/oauth-records.ts';
import { ClientDocumentError, fetchClientDocument, loopbackClientId } from './cimd.ts';

/**
 * The authorization server's storage: one class per kind of record, all in `oauth_records` on
 * the app's own database (SQLite or Postgres), so every process sees every grant and token.
 *
 * Its own sign-in sessions are not kept: Tandem's browser session is the one record of who is
 * signed in, and every authorization passes through the consent page, which reads it.
 */
export function adapterFor(records: OAuthRecords, options: { loopbackClients: boolean }) {
  return class TandemAdapter implements Adapter {
    readonly name: string;

    constructor(name: string) {
      this.name = name;
    }

    get #kept() {
      return this.name !== 'Session';
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.#kept) await records.upsert(this.name, id, payload as Payload, expiresIn);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (!this.#kept) return undefined;
      const found = (await records.find(this.name, id)) as AdapterPayload | undefined;
      if (found || this.name !== 'Client' || !options.loopbackClients) return found;
      const url = loopbackClientId(id);
      if (!url) return undefined;
      try {
        return (await fetchClientDocument(url)) as AdapterPayload;
      } catch (error) {
        if (error instanceof ClientDocumentError) throw new errors.InvalidClient(error.message);
        throw error;
      }
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (!this.#kept) return undefined;
      return (await records.findByUid(this.name, uid)) as AdapterPayload | undefined;
    }

    async findByUserCode(): Promise<undefined> {
      // Device codes are not enabled.
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await records.consume(this.name, id);
    }

    async destroy(id: string): Promise<void> {
      await records.destroy(this.name, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await records.revokeByGrantId(grantId);
    }
  };
}
