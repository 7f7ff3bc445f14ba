/**
 * The host page: `page.html` with each `{{name}}` replaced by its value, HTML-escaped, and the headers it is
 * served with. Values land only in text and in double-quoted attributes (a placeholder inside a `<script>`
 * or `<style>` block makes this module refuse to load), so no value, whatever it holds, adds markup or
 * script. The CSP then allows exactly the host script and the page's own inline script and style, by hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const PAGE_TEMPLATE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');

/** What the page shows; every value is escaped, none is trusted. */
export interface PageValues {
  /** The service's base URL, where `/embed.js` is. */
  apiBaseUrl: string;
  /** The session's `embedUrl`, from the service. */
  embedUrl: string;
  /** Your signed-in user's name. */
  userName: string;
  boardId: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character] as string);
}

/** The text of each inline `<script>` (one without `src`) or `<style>` block, as the browser hashes it. */
export function inlineBlocks(template: string, tag: 'script' | 'style'): string[] {
  const blocks = template.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'g'));
  return [...blocks].filter((block) => !/\ssrc=/.test(block[1] ?? '')).map((block) => block[2] ?? '');
}

/**
 * Throws unless every placeholder of `template` is in text or in a double-quoted attribute, where escaping
 * makes any value inert: never in a script or style block, an unquoted or single-quoted attribute, or a tag
 * name. Checked when this module loads, so a page edited into an unsafe one never serves.
 */
export function checkPlaceholders(template: string): void {
  for (const block of [...inlineBlocks(template, 'script'), ...inlineBlocks(template, 'style')]) {
    if (block.includes('{{')) throw new Error('page.html: a placeholder inside a script or style block');
  }
  for (const tag of template.matchAll(/<[^>]*\{\{[^>]*>/g)) {
    const outsideQuotes = tag[0].replace(/="[^"]*"/g, '=""');
    if (outsideQuotes.includes('{{'))
      throw new Error(`page.html: a placeholder outside "quotes" in ${tag[0]}`);
  }
}

checkPlaceholders(PAGE_TEMPLATE);

export function renderPage(values: PageValues, template = PAGE_TEMPLATE): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_placeholder, name: string) => {
    const value = (values as unknown as Record<string, unknown>)[name];
    if (typeof value !== 'string') throw new Error(`page.html names {{${name}}}, which has no value`);
    return escapeHtml(value);
  });
}

const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const SCRIPT_HASHES = inlineBlocks(PAGE_TEMPLATE, 'script').map(hashOf).join(' ');
const STYLE_HASHES = inlineBlocks(PAGE_TEMPLATE, 'style').map(hashOf).join(' ');

/**
 * The page's Content Security Policy. Scripts: the service's `/embed.js` and the page's own inline script,
 * nothing else (no `'unsafe-inline'`, no `eval`). Frames: the service, then the board's application, which
 * the embed page hands the frame to. A host page cannot know every board's application in advance, so any
 * https origin may be framed, plus loopback http when the service itself runs on loopback http (the
 * reference application of `npm start`); list your boards' application origins instead when you know them.
 */
export function contentSecurityPolicy(apiBaseUrl: string): string {
  const api = new URL(apiBaseUrl);
  const local = api.protocol === 'http:' && (api.hostname === '127.0.0.1' || api.hostname === 'localhost');
  const frames = [api.origin, 'https:', ...(local ? ['http://127.0.0.1:*', 'http://localhost:*'] : [])];
  return [
    "default-src 'none'",
    `script-src ${apiBaseUrl}/embed.js ${SCRIPT_HASHES}`,
    `style-src ${STYLE_HASHES}`,
    "connect-src 'self'",
    `frame-src ${frames.join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The headers of the page: it holds an embed URL, a credential, so nothing may keep a copy of it. */
export function pageHeaders(apiBaseUrl: string): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': contentSecurityPolicy(apiBaseUrl),
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
}
