/**
 * Each tool's icon, one per kind of thing it works on, drawn as a small SVG the app serves at
 * `/icons/{kind}.svg` (clients show it beside the tool's name).
 */
export const ICON_KINDS = ['automation', 'page', 'document', 'comment'] as const;
export type IconKind = (typeof ICON_KINDS)[number];

const frame = (body: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#3a5bd9" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;

export const ICON_SVG: Record<IconKind, string> = {
  automation: frame('<path d="M13 2 4 14h7l-1 8 9-12h-7z"/>'),
  page: frame('<rect x="3" y="4" width="18" height="16" rx="2"/><path d="M3 9h18M7 13l-2 2 2 2M11 17l2-4"/>'),
  document: frame('<path d="M6 2h9l5 5v15H6z"/><path d="M14 2v6h6M9 13h8M9 17h8"/>'),
  comment: frame('<path d="M4 4h16v12H9l-5 4z"/>'),
};

/** The icon list of a tool of this kind, for a server whose app is at `origin`. */
export const toolIcons = (kind: IconKind, origin: string) => [{ src: `${origin}/icons/${kind}.svg` }];
