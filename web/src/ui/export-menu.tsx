import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { ApiFailure } from '../api.ts';
import { apiError } from '../../../src/contract/endpoint.ts';
import { ErrorNote } from './status.tsx';

const FORMAT_WORDS = { markdown: 'Markdown', html: 'HTML' } as const;
type Format = keyof typeof FORMAT_WORDS;

/** The file name the server gives (`filename*=UTF-8''…`), or a plain one. */
function fileNameOf(response: Response, format: Format): string {
  const header = response.headers.get('content-disposition') ?? '';
  const match = /filename\*=UTF-8''([^;]+)/.exec(header);
  if (match?.[1]) return decodeURIComponent(match[1]);
  return format === 'html' ? 'export.html' : 'export.md';
}

/** Downloads the artifact's export; the server records it as an `export` version row. */
async function download(artifactId: string, format: Format): Promise<void> {
  const response = await fetch(`/api/artifacts/${encodeURIComponent(artifactId)}/export?format=${format}`, {
    credentials: 'same-origin',
  }).catch(() => {
    throw new ApiFailure(0, 'offline', 'Tandem could not be reached; check your connection and try again.');
  });
  if (!response.ok) {
    const refusal = apiError.safeParse(await response.json().catch(() => undefined));
    throw new ApiFailure(
      response.status,
      refusal.success ? refusal.data.error : 'internal',
      refusal.success ? refusal.data.message : `The export failed (HTTP ${response.status}); try again.`,
    );
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = fileNameOf(response, format);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * `Export`, a menu button: documents offer Markdown and HTML, pages HTML. The file is the text
 * at the current version; `exported` is told once it is made (the versions list shows the row).
 */
export function ExportMenu({
  artifactId,
  formats,
  exported,
}: {
  artifactId: string;
  formats: Format[];
  exported?: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<ApiFailure | undefined>();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];

  const wrap = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (!open) return;
    items()[0]?.focus();
    // A click anywhere else closes the menu.
    const away = (event: MouseEvent) => {
      if (!wrap.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', away);
    return () => document.removeEventListener('mousedown', away);
  }, [open]);

  const choose = async (format: Format) => {
    setOpen(false);
    button.current?.focus();
    setError(undefined);
    try {
      await download(artifactId, format);
      exported?.();
    } catch (failure) {
      setError(
        failure instanceof ApiFailure
          ? failure
          : new ApiFailure(0, 'internal', 'The export failed; try again.'),
      );
    }
  };

  const onMenuKey = (event: KeyboardEvent) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      all[(at + step + all.length) % all.length]?.focus();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      setOpen(false);
      button.current?.focus();
    } else if (event.key === 'Tab') {
      setOpen(false);
    }
  };

  return (
    <span className="menu-wrap" ref={wrap}>
      <button
        ref={button}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? `export-${artifactId}` : undefined}
        onClick={() => setOpen(!open)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setOpen(true);
          }
        }}
      >
        Export
      </button>
      {open && (
        <ul
          ref={menu}
          id={`export-${artifactId}`}
          role="menu"
          aria-label="Export"
          className="menu"
          onKeyDown={onMenuKey}
        >
          {formats.map((f) => (
            <li role="none" key={f}>
              <button type="button" role="menuitem" tabIndex={-1} onClick={() => void choose(f)}>
                {FORMAT_WORDS[f]}
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={error} />
    </span>
  );
}
