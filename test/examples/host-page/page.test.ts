import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkPlaceholders,
  contentSecurityPolicy,
  escapeHtml,
  inlineBlocks,
  PAGE_TEMPLATE,
  type PageValues,
  renderPage,
} from '../../../examples/host-page/page';

/**
 * The example host page's rendering: every value escaped into text or a double-quoted attribute, and a
 * CSP that allows the host script and the page's own inline blocks, by hash, and nothing else.
 */
const values: PageValues = {
  apiBaseUrl: 'http://127.0.0.1:3000',
  embedUrl: 'http://127.0.0.1:3000/embed?token=q8Zc3Jx0bV1yTn4Kd7Wm2Rf9Hs6Lp5Ae',
  userName: 'Ada Lovelace',
  boardId: 'roadmap',
};
const HOSTILE = `"><script>alert(1)</script><img src=x onerror=alert(2)>'&amp;{{embedUrl}}`;

describe('renderPage', () => {
  it('fills every placeholder of page.html and leaves none', () => {
    const html = renderPage(values);
    expect(html).toContain(`data-embed-url="${values.embedUrl}"`);
    expect(html).toContain('<script src="http://127.0.0.1:3000/embed.js?v=');
    expect(html).toContain('Signed in as Ada Lovelace');
    expect(html).not.toContain('{{');
  });

  it.each(Object.keys(values))(
    'renders a hostile %s as inert text: no tag, attribute or script of its own',
    (name) => {
      const html = renderPage({ ...values, [name]: HOSTILE });
      const escaped =
        '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#39;&amp;amp;{{embedUrl}}';
      expect(html).toContain(escaped);
      expect(html.match(/<script\b/g)).toHaveLength(PAGE_TEMPLATE.match(/<script\b/g)?.length ?? 0);
      expect(html).not.toContain('<img');
      expect(html).not.toContain('onerror=alert(2)>');
    },
  );

  it('refuses a template naming a value it was not given', () => {
    expect(() => renderPage(values, '<p>{{password}}</p>')).toThrow(/\{\{password\}\}/);
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that can end a text or an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('checkPlaceholders', () => {
  it('accepts placeholders in text and in double-quoted attributes, as page.html has them', () => {
    expect(() => checkPlaceholders(PAGE_TEMPLATE)).not.toThrow();
    expect(() => checkPlaceholders('<p title="{{a}}">{{b}}</p>')).not.toThrow();
  });

  it.each([
    ['a script block', '<script>const url = "{{embedUrl}}";</script>'],
    ['a style block', '<style>body { background: url({{a}}) }</style>'],
    ['an unquoted attribute', '<div data-x={{a}}></div>'],
    ['a single-quoted attribute', "<div data-x='{{a}}'></div>"],
    ['the attributes of a tag', '<div {{a}}></div>'],
  ])('refuses a placeholder in %s, where escaping would not make a value inert', (_where, template) => {
    expect(() => checkPlaceholders(template)).toThrow(/page\.html/);
  });
});

describe('contentSecurityPolicy', () => {
  const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

  it("allows the service's host script and the page's own inline script and style, by hash, and nothing else", () => {
    const csp = contentSecurityPolicy('http://127.0.0.1:3000');
    const directives = Object.fromEntries(
      csp.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual([
      'http://127.0.0.1:3000/embed.js',
      ...inlineBlocks(PAGE_TEMPLATE, 'script').map(sha256),
    ]);
    expect(directives['style-src']).toEqual(inlineBlocks(PAGE_TEMPLATE, 'style').map(sha256));
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['base-uri']).toEqual(["'none'"]);
    expect(directives['form-action']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(csp).not.toMatch(/unsafe-/);
    expect(csp.split(/;? /)).not.toContain('*');
  });

  it('frames the service and board applications: https, and loopback http only when the service runs there', () => {
    expect(contentSecurityPolicy('http://127.0.0.1:3000')).toContain(
      'frame-src http://127.0.0.1:3000 https: http://127.0.0.1:* http://localhost:*;',
    );
    expect(contentSecurityPolicy('https://embed.example.com/prod')).toContain(
      'frame-src https://embed.example.com https:;',
    );
    expect(contentSecurityPolicy('https://embed.example.com/prod')).toContain(
      'script-src https://embed.example.com/prod/embed.js ',
    );
  });
});
