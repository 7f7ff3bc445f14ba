import { describe, expect, it } from 'vitest';
import { escapeHtml, jsonIsland } from '#lib/adapters/http/embed/html';

describe('escapeHtml', () => {
  it.each([
    ['&', '&amp;'],
    ['<', '&lt;'],
    ['>', '&gt;'],
    ['"', '&quot;'],
    ["'", '&#39;'],
  ])('escapes %j as %j', (raw, escaped) => {
    expect(escapeHtml(raw)).toBe(escaped);
  });

  it('escapes a double quote inside an attribute value so it cannot close the attribute', () => {
    expect(escapeHtml('"><img src=x onerror=alert(1)>')).toBe('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });

  it('escapes a single quote so a single-quoted attribute cannot be closed', () => {
    expect(escapeHtml("'onmouseover='alert(1)")).toBe('&#39;onmouseover=&#39;alert(1)');
  });

  it('escapes the ampersand first, so existing entities are shown literally rather than decoded', () => {
    expect(escapeHtml('&lt;b&gt; & <b>')).toBe('&amp;lt;b&amp;gt; &amp; &lt;b&gt;');
  });

  it('leaves text without special characters unchanged, including non-ASCII', () => {
    expect(escapeHtml('Grace Hopper – Zürich 🚀')).toBe('Grace Hopper – Zürich 🚀');
  });

  it('escapes every occurrence, not only the first', () => {
    expect(escapeHtml('<<>>&&""\'\'')).toBe('&lt;&lt;&gt;&gt;&amp;&amp;&quot;&quot;&#39;&#39;');
  });
});

describe('jsonIsland', () => {
  const hostile = [
    '</script><script>alert(1)</script>',
    '</SCRIPT >',
    '<!--',
    '<!-- <script>',
    '-->',
    ']]>',
    '<![CDATA[x]]>',
    'a & b &amp; c',
    'line\u2028separator\u2029paragraph',
    '"quoted" \'single\' \\ backslash',
    'é ü 漢字 🚀',
  ];

  it.each(hostile)('round-trips %j through JSON.parse', (value) => {
    const data = { value, nested: { list: [value, 1, null, true] }, [value]: value };
    expect(JSON.parse(jsonIsland(data))).toEqual(data);
  });

  it.each(hostile)('never contains a raw <, >, &, U+2028 or U+2029 for %j', (value) => {
    const island = jsonIsland({ key: value, [value]: [value] });
    expect(island).not.toMatch(/[<>&\u2028\u2029]/);
  });

  it('cannot close the script element nor open a comment', () => {
    const island = jsonIsland({ a: '</script><script>alert(1)</script>', b: '<!--', c: ']]>' });
    expect(island.toLowerCase()).not.toContain('</script');
    expect(island).not.toContain('<!--');
    expect(island).not.toContain(']]>');
    expect(island).toContain('\\u003c/script\\u003e');
    expect(island).toContain('\\u003c!--');
    expect(island).toContain(']]\\u003e');
  });

  it('escapes the ampersand as \\u0026 and the separators as \\u2028 / \\u2029', () => {
    expect(jsonIsland('&\u2028\u2029')).toBe('"\\u0026\\u2028\\u2029"');
  });

  it('serializes plain values like JSON.stringify', () => {
    expect(jsonIsland({ a: 1, b: [true, null], c: 'x' })).toBe('{"a":1,"b":[true,null],"c":"x"}');
  });
});
