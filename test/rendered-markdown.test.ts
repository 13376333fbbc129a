import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import createDOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';
import { Marked } from 'marked';
import { markdownRenderer } from '../src/http/view/rendered-markdown.ts';
import { problemsIn } from './support/rendered-checks.ts';
import { controlVectors, HARMLESS_MARKDOWN, XSS_VECTORS } from './support/xss-vectors.ts';

const ORIGIN = 'http://127.0.0.1:8787';
/** The read view of a document: where relative links in it resolve from. */
const BASE = `${ORIGIN}/documents/doc_1`;

describe('markdown rendered in the app (the read view)', () => {
  let render: (text: string, base: string) => string;
  let window: JSDOM['window'];
  before(() => {
    window = new JSDOM('<!doctype html>', { url: BASE }).window;
    render = markdownRenderer(createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]));
  });

  /** The rendered text as a reader's page holds it. */
  const shown = (markdown: string) => {
    const host = window.document.createElement('div');
    host.innerHTML = render(markdown, BASE);
    return host;
  };

  it('holds no control, no submitting attribute and no link to a state-changing route, for every vector', () => {
    const vectors = controlVectors(ORIGIN);
    assert.ok(vectors.length >= 50, `only ${vectors.length} vectors`);
    // What the read view rendered before: DOMPurify's HTML profile alone lets most of them through.
    const plain = createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]);
    const before = (markdown: string) => {
      const host = window.document.createElement('div');
      host.innerHTML = plain.sanitize(new Marked({ gfm: true, async: false }).parse(markdown) as string, {
        USE_PROFILES: { html: true },
      });
      return host;
    };
    const caughtByDefaults = vectors.filter((v) => problemsIn(before(v.markdown), BASE).length === 0);
    assert.deepEqual(
      caughtByDefaults.map((v) => v.name),
      [
        'obsolete isindex and keygen',
        'form attribute on an element',
        'contenteditable region',
        'ping attribute',
        'svg link',
        'math link',
        'iframe',
        'object and embed',
        'meta refresh',
        'base element',
        'link element',
        'style overlay',
        'inline style overlay',
        'target and opener',
      ],
      'only these were held back before (by DOMPurify’s own rules, or are no problem of this kind)',
    );
    const failures = vectors
      .map((v) => ({ name: v.name, problems: problemsIn(shown(v.markdown), BASE) }))
      .filter((f) => f.problems.length > 0);
    assert.deepEqual(failures, []);
    // All at once too (one vector's markup may open what the next one relies on).
    assert.deepEqual(problemsIn(shown(vectors.map((v) => v.markdown).join('\n\n')), BASE), []);
  });

  it('shows a GFM task as a glyph, not a check box', () => {
    const list = shown('- [x] shipped\n- [ ] not yet');
    assert.equal(list.querySelectorAll('input').length, 0);
    assert.deepEqual(
      Array.from(list.querySelectorAll('li')).map((li) => li.textContent?.trim()),
      ['☑ shipped', '☐ not yet'],
    );
  });

  it('keeps what is harmless: headings, tables, code, images, links to the app’s pages and to other sites', () => {
    const page = shown(HARMLESS_MARKDOWN);
    assert.equal(page.querySelector('h1')?.textContent, 'Heading');
    const links = Array.from(page.querySelectorAll('a')).map((a) => a.getAttribute('href'));
    assert.deepEqual(links, ['/documents/doc_1', 'https://example.org/path']);
    assert.equal(page.querySelectorAll('table td').length, 2);
    assert.equal(page.querySelector('pre code')?.textContent, 'code\n');
    assert.equal(page.querySelector('img')?.getAttribute('src'), 'https://example.org/logo.png');
    // The text of a link that had to go stays readable.
    assert.equal(shown('[sign out](/logout)').textContent?.trim(), 'sign out');
  });

  it('dresses nothing up as the app: no styles, no new targets, no ids or names of its own', () => {
    const page = shown(
      '<style>a{position:fixed}</style><a style="position:fixed" target="_top" href="https://example.org/">x</a><div id="root" name="content">y</div>',
    );
    assert.equal(page.querySelectorAll('style, [style], [target]').length, 0);
    assert.equal(page.querySelector('div')?.id, 'user-content-root');
    assert.equal(page.querySelector('a')?.getAttribute('href'), 'https://example.org/');
  });

  it('lets no script-running vector through either', () => {
    for (const v of XSS_VECTORS) {
      const page = shown(v.html);
      const bad = Array.from(page.querySelectorAll('*')).filter(
        (el) =>
          el.localName === 'script' ||
          Array.from(el.attributes).some((a) => /^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)),
      );
      assert.equal(bad.length, 0, `${v.name}: ${page.innerHTML}`);
    }
  });
});
