import { describe, expect, it } from 'vitest';
import { endedViewResponse, parseEndedReason, renderEndedView } from '#lib/adapters/http/embed/ended';
import { FRAME_SCRIPT } from '#lib/adapters/http/embed/frame-script';
import { escapeHtml } from '#lib/adapters/http/embed/html';
import { embedHeaders } from '#lib/adapters/http/embed/http';
import { LOCALES, TEXTS } from '#lib/adapters/http/embed/i18n';

const FRAME_ANCESTORS = 'https: http://localhost:*';

describe('parseEndedReason', () => {
  it.each(['expired', 'revoked'] as const)('takes %j as given', (reason) => {
    expect(parseEndedReason(reason)).toBe(reason);
  });

  it.each([undefined, '', 'ended', 'EXPIRED', 'logout', '"><script>'])(
    'shows the neutral view for %j',
    (value) => {
      expect(parseEndedReason(value)).toBe('ended');
    },
  );
});

describe('renderEndedView', () => {
  it.each([
    ['expired', 'session_expired'],
    ['revoked', 'session_revoked'],
    ['ended', 'ended'],
  ] as const)('shows the %s view in every language, with the words of the %s page', (reason, code) => {
    for (const locale of LOCALES) {
      const html = renderEndedView(reason, { locale, theme: 'auto' });
      const { sentence, action } = TEXTS[locale].notices[code];
      expect(html).toContain(`<html lang="${locale}" data-theme="auto">`);
      expect(html).toContain(
        `<div class="notice" role="alert" data-testid="embed-ended" data-code="${code}">\n<h1>${escapeHtml(sentence)}</h1>\n<p class="action" data-testid="embed-action">${escapeHtml(action)}</p>\n</div>`,
      );
    }
  });

  it('tells its script the reason, which it reports to the host, and carries no other script', () => {
    const html = renderEndedView('revoked', { locale: 'en', theme: 'dark' });
    expect(html).toContain('<body data-embed-state="ended" data-embed-reason="revoked">');
    expect(html).toContain('<html lang="en" data-theme="dark">');
    expect(html.split('<script').length - 1).toBe(1);
    expect(html).toContain(`<script>${FRAME_SCRIPT}</script>`);
  });
});

describe('endedViewResponse', () => {
  it('answers 200 with the embed headers, framed under the stage’s frame-ancestors', () => {
    const result = endedViewResponse(
      { queryStringParameters: { reason: 'expired', locale: 'de', theme: 'dark' } },
      FRAME_ANCESTORS,
    );
    expect(result.statusCode).toBe(200);
    expect(result.headers).toEqual({
      ...embedHeaders(FRAME_ANCESTORS),
      'Content-Type': 'text/html; charset=utf-8',
    });
    expect(result.body).toContain('<html lang="de" data-theme="dark">');
    expect(result.body).toContain(escapeHtml(TEXTS.de.notices.session_expired.sentence));
  });

  it.each([
    ['no query string', null],
    ['unknown values', { reason: 'banned', locale: 'pt-BR', theme: 'neon' }],
    ['markup', { reason: '<b>', locale: '"><script>alert(1)</script>', theme: "'onload='x" }],
  ])(
    'falls back to the neutral view in English and the automatic theme for %s, never an error',
    (_l, query) => {
      const result = endedViewResponse({ queryStringParameters: query }, FRAME_ANCESTORS);
      expect(result.statusCode).toBe(200);
      expect(result.body).toContain('<html lang="en" data-theme="auto">');
      expect(result.body).toContain('data-embed-reason="ended"');
      expect(result.body).toContain(escapeHtml(TEXTS.en.notices.ended.sentence));
      for (const value of Object.values(query ?? {})) expect(result.body).not.toContain(value);
    },
  );
});
