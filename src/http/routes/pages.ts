import * as contract from '../../contract/pages.ts';
import { DomainError } from '../../errors.ts';
import { defineRoute } from '../route.ts';

/** Where a page version is shown: a signed link on the pages origin and the frame's sandbox. */
export type PageFrame = (pageId: string, version: number) => { src: string; sandbox: string };

/** A page as its viewer shows it, and restoring one of its versions. */
export function pageViewRoutes(frame: PageFrame) {
  return [
    defineRoute({
      ...contract.readPage,
      description: 'a page’s title, version, the caller’s role and the frame that shows it',
      scopes: ['documents:read'],
      handler: async ({ services, actor, params }) => {
        const { html: _html, ...page } = await services.pages.read(actor, params.id);
        const { may_share } = await services.sharing.rights(actor, page.page_id);
        return { ...page, may_share, frame: frame(page.page_id, page.version) };
      },
    }),
    defineRoute({
      ...contract.restorePage,
      description: 'write an earlier version’s HTML as the next version',
      scopes: ['documents:write'],
      bodyHint: 'Send JSON: {"version_id": "...", "expected_version": N}',
      handler: async ({ services, actor, params, body }) => {
        try {
          return await services.pages.restore(actor, { ...body, page_id: params.id });
        } catch (error) {
          // The tool's sentence sends an agent to read_page; a person reloads.
          if (error instanceof DomainError && error.code === 'version_conflict') {
            throw new DomainError(
              'version_conflict',
              `This page changed since you opened it (it is at version ${String(error.data?.current_version)} now); reload it and try again.`,
              { data: { current_version: error.data?.current_version } },
            );
          }
          throw error;
        }
      },
    }),
  ];
}
