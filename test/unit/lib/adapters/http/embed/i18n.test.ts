import { describe, expect, it, vi } from 'vitest';
import {
  EMBED_ERROR_CODES,
  formatInstant,
  isLanguageTag,
  LOCALES,
  parseLocale,
  parsePresentation,
  parseTheme,
  TEXTS,
  type Texts,
} from '#lib/adapters/http/embed/i18n';

describe('parseTheme', () => {
  it.each(['light', 'dark', 'auto'] as const)('takes %j as given', (theme) => {
    expect(parseTheme(theme)).toBe(theme);
  });

  const unknownThemes = [
    undefined,
    '',
    'Dark',
    'DARK',
    ' dark',
    'dark ',
    'blue',
    'light dark',
    '"><script>',
    'auto;x',
  ];
  it.each(unknownThemes)('ignores %j and follows the system (auto)', (value) => {
    expect(parseTheme(value)).toBe('auto');
  });
});

describe('isLanguageTag', () => {
  it.each([
    'de',
    'DE',
    'de-DE',
    'de-CH',
    'fr-CA',
    'es-419',
    'zh-Hant-TW',
    'sr-Latn-RS',
    'en-US-x-twain',
    'sl-rozaj-biske',
    'de-CH-1901',
    'en-u-ca-gregory',
    'zh-cmn-Hans-CN',
    'tlh',
    'x-whatever',
  ])('accepts the well-formed tag %j', (tag) => {
    expect(isLanguageTag(tag)).toBe(true);
  });

  it.each([
    '',
    'd',
    'de_DE',
    'de-',
    '-de',
    'de--DE',
    'deutsch-schweiz-x',
    'de DE',
    'de-DE;q=0.9',
    'de,en',
    '"><script>alert(1)</script>',
    '123',
    'de-abcdefghi',
    `en-${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(8)}-${'e'.repeat(8)}-${'f'.repeat(8)}-${'g'.repeat(8)}`,
  ])('refuses %j', (tag) => {
    expect(isLanguageTag(tag)).toBe(false);
  });
});

describe('parseLocale', () => {
  it.each([
    ['en', 'en'],
    ['de', 'de'],
    ['de-DE', 'de'],
    ['de-AT', 'de'],
    ['DE-ch', 'de'],
    ['fr', 'fr'],
    ['fr-CA', 'fr'],
    ['es', 'es'],
    ['es-419', 'es'],
    ['en-GB', 'en'],
  ] as const)('shows %j in %j', (tag, locale) => {
    expect(parseLocale(tag)).toBe(locale);
  });

  it.each([undefined, '', 'it', 'pt-BR', 'zh-Hant-TW', 'x-de', 'deu', 'de_DE', 'de DE', '<b>de</b>'])(
    'falls back to English for %j',
    (tag) => {
      expect(parseLocale(tag)).toBe('en');
    },
  );
});

describe('parsePresentation', () => {
  it('reads the theme and locale query parameters', () => {
    expect(parsePresentation({ token: 't', theme: 'dark', locale: 'de-DE' })).toEqual({
      theme: 'dark',
      locale: 'de',
    });
  });

  it('defaults to the system theme in English without a query string', () => {
    expect(parsePresentation(null)).toEqual({ theme: 'auto', locale: 'en' });
    expect(parsePresentation(undefined)).toEqual({ theme: 'auto', locale: 'en' });
  });
});

describe('TEXTS', () => {
  /** Every string of a Texts, by a path such as `errors.invalid_token`. */
  function entries(texts: Texts): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const walk = (value: unknown, path: string) => {
      if (typeof value === 'string') out.push([path, value]);
      else
        for (const [key, child] of Object.entries(value as object))
          walk(child, path ? `${path}.${key}` : key);
    };
    walk(texts, '');
    return out;
  }
  const english = new Map(entries(TEXTS.en));

  it.each(LOCALES)('has every text in %s, none blank', (locale) => {
    const texts = new Map(entries(TEXTS[locale]));
    expect([...texts.keys()].sort()).toEqual([...english.keys()].sort());
    for (const [path, text] of texts) expect(text.trim(), path).not.toBe('');
  });

  it.each(LOCALES.filter((locale) => locale !== 'en'))('translates every text into %s', (locale) => {
    for (const [path, text] of entries(TEXTS[locale])) expect(text, path).not.toBe(english.get(path));
  });

  it.each(LOCALES)('has a notice in %s for every refusal and for the neutral ended view', (locale) => {
    expect(Object.keys(TEXTS[locale].notices).sort()).toEqual([...EMBED_ERROR_CODES, 'ended'].sort());
  });
});

describe('formatInstant', () => {
  it('shows the instant to the minute in UTC, in ISO 8601’s form that reads the same in every language', () => {
    expect(formatInstant('2026-01-31T17:05:42.123Z')).toBe('2026-01-31 17:05 UTC');
    expect(formatInstant('2027-07-04T23:59:59.999Z')).toBe('2027-07-04 23:59 UTC');
  });

  it('formats no date in a language on the server: the first Intl format of a process loads ICU’s data', () => {
    const made = vi.spyOn(Intl, 'DateTimeFormat');
    formatInstant('2026-01-31T17:05:00.000Z');
    expect(made).not.toHaveBeenCalled();
    made.mockRestore();
  });

  it('shows a malformed instant as it is rather than failing the page', () => {
    expect(formatInstant('not a date')).toBe('not a date');
  });
});
