import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasActiveContent, isJavascriptUrl } from './html-scan.ts';

describe('isJavascriptUrl', () => {
  const running: [string, string][] = [
    ['a plain javascript: URL', 'javascript:alert(1)'],
    ['upper case', 'JAVASCRIPT:alert(1)'],
    ['mixed case', 'JaVaScRiPt:alert(1)'],
    ['leading spaces', '   javascript:alert(1)'],
    ['a leading control character', '\u0001javascript:alert(1)'],
    ['a tab inside the scheme', 'java\tscript:alert(1)'],
    ['a newline and a carriage return inside the scheme', 'jav\na\rscript:alert(1)'],
    ['a vbscript: URL', 'vbscript:msgbox(1)'],
    ['a bare scheme', 'javascript:'],
  ];
  for (const [label, url] of running) {
    it(`recognises ${label}`, () => assert.equal(isJavascriptUrl(url), true));
  }

  const harmless: [string, string][] = [
    ['an https URL', 'https://example.test/'],
    ['an https URL mentioning javascript: in its path', 'https://example.test/javascript:alert(1)'],
    ['a query mentioning javascript:', '?q=javascript:alert(1)'],
    ['a fragment', '#javascript:alert(1)'],
    ['a relative path', '/javascript/app.js'],
    ['the word without a colon', 'javascript'],
    ['a mailto URL', 'mailto:ada@acme.test'],
    ['an empty value', ''],
  ];
  for (const [label, url] of harmless) {
    it(`does not flag ${label}`, () => assert.equal(isJavascriptUrl(url), false));
  }
});

describe('hasActiveContent', () => {
  const active: [string, string][] = [
    ['a script element', '<p>x</p><script>alert(1)</script>'],
    ['an external script', '<script src="https://cdn.test/a.js"></script>'],
    ['an upper-case script element', '<SCRIPT>alert(1)</SCRIPT>'],
    [
      'a script in the head of a full document',
      '<!doctype html><html><head><script>1</script></head><body></body></html>',
    ],
    ['a script inside svg', '<svg><script>alert(1)</script></svg>'],
    ['a script inside a template', '<template><div><script>alert(1)</script></div></template>'],
    ['an onerror handler', '<img src="x" onerror="alert(1)">'],
    ['an upper-case handler', '<img src="x" ONERROR="alert(1)">'],
    ['a handler with no value', '<p onclick>x</p>'],
    ['a body onload handler', '<body onload="go()"><p>x</p></body>'],
    ['a handler on an svg element', '<svg onload="alert(1)"></svg>'],
    ['a handler inside noscript', '<noscript><img src="x" onerror="alert(1)"></noscript>'],
    ['a javascript: link', '<a href="javascript:alert(1)">x</a>'],
    ['a decimal-entity javascript: link', '<a href="&#106;&#97;&#118;&#97;script&#58;alert(1)">x</a>'],
    ['a hex-entity javascript: link', '<a href="&#x6A;avascript&#x3A;alert(1)">x</a>'],
    ['a named-entity colon', '<a href="javascript&colon;alert(1)">x</a>'],
    ['an encoded tab in the scheme', '<a href="java&#x09;script:alert(1)">x</a>'],
    ['an encoded newline in the scheme', '<a href="jav&NewLine;ascript:alert(1)">x</a>'],
    ['a literal tab in the scheme', '<a href="java\tscript:alert(1)">x</a>'],
    ['leading whitespace before the scheme', '<a href=" \n javascript:alert(1)">x</a>'],
    ['an unquoted javascript: href', '<a href=javascript:alert(1)>x</a>'],
    ['a javascript: iframe src', '<iframe src="javascript:alert(1)"></iframe>'],
    ['a javascript: form action', '<form action="javascript:alert(1)"><button>go</button></form>'],
    ['a javascript: formaction', '<form><button formaction="javascript:alert(1)">go</button></form>'],
    ['a javascript: object data', '<object data="javascript:alert(1)"></object>'],
    ['a javascript: embed src', '<embed src="javascript:alert(1)">'],
    ['a vbscript: link', '<a href="vbscript:msgbox(1)">x</a>'],
    [
      'an svg xlink:href javascript: link',
      '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    ],
    ['an svg href javascript: link', '<svg><a href="javascript:alert(1)"><text>x</text></a></svg>'],
    [
      'an svg animate whose values set a javascript: href',
      '<svg><a><animate attributeName="href" values="javascript:alert(1)"/></a></svg>',
    ],
    [
      'an svg set whose to sets a javascript: href',
      '<svg><a><set attributeName="href" to="javascript:alert(1)"/></a></svg>',
    ],
    ['a script inside srcdoc', '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'],
    ['a handler inside srcdoc', '<iframe srcdoc="<img src=x onerror=alert(1)>"></iframe>'],
    [
      'a javascript: link inside nested srcdoc',
      `<iframe srcdoc="<iframe srcdoc='<a href=javascript:alert(1)>x</a>'></iframe>"></iframe>`,
    ],
  ];
  for (const [label, html] of active) {
    it(`flags ${label}`, () => assert.equal(hasActiveContent(html), true));
  }

  const harmless: [string, string][] = [
    ['plain markup', '<h1>Title</h1><p>Body <b>bold</b></p>'],
    [
      'a full document without scripts',
      '<!doctype html><html><head><title>t</title></head><body><p>x</p></body></html>',
    ],
    ['text mentioning javascript:', '<p>Never paste javascript: URLs into the address bar.</p>'],
    ['text mentioning a script tag, escaped', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['a script inside a comment', '<!-- <script>alert(1)</script> --><p>x</p>'],
    ['script text inside a textarea', '<textarea><script>alert(1)</script></textarea>'],
    ['script text inside a title', '<title><script>alert(1)</script></title>'],
    ['an attribute named data-onload', '<div data-onload="init()">x</div>'],
    ['an alt text naming an event', '<img src="a.png" alt="onerror=alert(1)">'],
    ['a title attribute holding javascript:', '<abbr title="javascript:void(0)">JS</abbr>'],
    ['a class name starting with on', '<div class="onboarding">x</div>'],
    ['an https link', '<a href="https://example.test/?next=javascript:alert(1)">x</a>'],
    ['a relative link', '<a href="/docs/javascript.html">x</a>'],
    ['a mailto link', '<a href="mailto:ada@acme.test">mail</a>'],
    ['an https image', '<img src="https://example.test/a.png">'],
    ['inline styles', '<p style="color: red">x</p><style>p { margin: 0 }</style>'],
    ['a srcdoc without active content', '<iframe srcdoc="<p>hello</p>"></iframe>'],
    ['an empty string', ''],
  ];
  for (const [label, html] of harmless) {
    it(`does not flag ${label}`, () => assert.equal(hasActiveContent(html), false));
  }
});

describe('hasActiveContent reads the source the ways browsers differ', () => {
  const shapes: [string, string][] = [
    ['a noscript title breakout', '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'],
    [
      'a style breakout inside select',
      '<select><style><a title="</style></select><img src=x onerror=alert(1)>"></style></select>',
    ],
    [
      'an iframe loading a data: HTML document',
      '<iframe src="data:text/html,%3Cscript%3Ealert(1)%3C/script%3E"></iframe>',
    ],
    [
      'an object loading a data: SVG document',
      '<object data="data:image/svg+xml,<svg onload=alert(1)>"></object>',
    ],
    [
      'an embed loading a data: HTML document',
      '<embed src=" data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">',
    ],
  ];
  for (const [label, html] of shapes) {
    it(`flags ${label}`, () => assert.equal(hasActiveContent(html), true));
  }
  it('does not flag a data: image shown by an img', () => {
    assert.equal(hasActiveContent('<img src="data:image/svg+xml,<svg></svg>">'), false);
  });
  it('does not flag a select whose options are plain text', () => {
    assert.equal(hasActiveContent('<select><option>one</option><option>two</option></select>'), false);
  });
  it('reads a page with a quarter of a million sibling elements, a script at its end included', () => {
    const wide = '<br>'.repeat(250_000);
    assert.equal(hasActiveContent(wide), false);
    assert.equal(hasActiveContent(`${wide}<script>x()</script>`), true);
  });
});
