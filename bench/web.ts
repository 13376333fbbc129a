/**
 * What a browser downloads to open each page of the web app the first time: the JavaScript and
 * CSS of the shell plus that page's own chunks, raw and as served (gzip). Reads the built app.
 *
 *   npm run build:web && node bench/web.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { WEB_DIST } from '../src/http/web.ts';

interface Chunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  css?: string[];
}

const manifestPath = join(WEB_DIST, '.vite', 'manifest.json');
if (!existsSync(manifestPath)) {
  console.error(`No built app at ${WEB_DIST}; run npm run build:web first.`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, Chunk>;
const entryKey = Object.keys(manifest).find((k) => manifest[k]!.isEntry)!;

/** The files a chunk pulls in before it runs: itself, its static imports (recursively) and their CSS. */
function closure(key: string, files = new Set<string>()): Set<string> {
  const chunk = manifest[key];
  if (!chunk || files.has(chunk.file)) return files;
  files.add(chunk.file);
  for (const css of chunk.css ?? []) files.add(css);
  for (const imported of chunk.imports ?? []) closure(imported, files);
  return files;
}

const sizes = (files: Set<string>, ext: string) => {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    if (!file.endsWith(ext)) continue;
    const body = readFileSync(join(WEB_DIST, file));
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
  }
  return { raw, gzip };
};

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const ROUTES: [string, string][] = [
  ['/', 'src/routes/home.tsx'],
  ['/documents', 'src/routes/documents.tsx'],
  ['/documents/{id}', 'src/routes/document.tsx'],
  ['/pages/{id}', 'src/routes/page.tsx'],
  ['/automations', 'src/routes/automations.tsx'],
  ['/automations/{id}', 'src/routes/automation.tsx'],
  ['/sessions/{id}', 'src/routes/session.tsx'],
  ['/notifications', 'src/routes/notifications.tsx'],
  ['/activity', 'src/routes/activity.tsx'],
];

console.log('First load of each page (the shell and the page’s own chunks); served gzip-compressed.\n');
console.log(
  `${'page'.padEnd(20)}${'JS'.padStart(12)}${'JS gzip'.padStart(12)}${'CSS'.padStart(11)}${'CSS gzip'.padStart(11)}`,
);
const TARGET = 400 * 1024;
let editorJs = 0;
for (const [route, source] of ROUTES) {
  if (!manifest[source]) {
    console.log(`${route.padEnd(20)}  (no chunk for ${source})`);
    continue;
  }
  const files = closure(source, closure(entryKey));
  const js = sizes(files, '.js');
  const css = sizes(files, '.css');
  if (route === '/documents/{id}') editorJs = js.gzip;
  console.log(
    `${route.padEnd(20)}${kb(js.raw).padStart(12)}${kb(js.gzip).padStart(12)}${kb(css.raw).padStart(11)}${kb(css.gzip).padStart(11)}`,
  );
}
console.log(
  `\nthe editor route: ${kb(editorJs)} of compressed JS, ${((editorJs / TARGET) * 100).toFixed(0)}% of the 400 KB target — ${editorJs <= TARGET ? 'PASS' : 'MISS'}`,
);
