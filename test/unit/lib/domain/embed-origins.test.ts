import { describe, expect, it } from 'vitest';
import { isEmbedOrigin, isFrameAncestorSource, splitOriginList } from '#lib/domain/embed-origins';
import { isFrameAncestorSource as settingRule } from '#lib/platform/values';

const ACCEPTED = [
  'https://app.acme.com',
  'https://*.acme.com',
  'https://app.acme.com:8443',
  'https://*.acme.com:8443',
  'http://localhost:3000',
  'http://127.0.0.1:8080',
  'http://localhost',
];

const REFUSED = [
  'https://app.acme.com/',
  'https://app.acme.com/embed',
  'https://app.acme.com?x',
  'https://app.acme.com#x',
  'http://app.acme.com',
  'ftp://app.acme.com',
  'https:',
  "'self'",
  "'none'",
  '*',
  'https://*',
  'https://app.*.acme.com',
  'https://*.*.acme.com',
  'http://localhost:*',
  'https://app_x.acme.com',
  'https://[::1]',
  'https://user@app.acme.com',
  'HTTPS://APP.ACME.COM',
  'https://a.acme.com https://b.acme.com',
  "https://a.acme.com; script-src 'unsafe-inline'",
  '',
  ' https://app.acme.com',
];

describe('isEmbedOrigin', () => {
  it.each(ACCEPTED)('accepts %j', (origin) => {
    expect(isEmbedOrigin(origin)).toBe(true);
  });

  it.each(REFUSED)('refuses %j', (origin) => {
    expect(isEmbedOrigin(origin)).toBe(false);
  });

  it('accepts only what is also a frame-ancestors source the embed function accepts', () => {
    for (const origin of ACCEPTED) expect(isFrameAncestorSource(origin)).toBe(true);
  });
});

describe('isFrameAncestorSource', () => {
  it('is the rule the functions’ settings apply too', () => {
    expect(settingRule).toBe(isFrameAncestorSource);
  });

  it.each(['https:', "'self'", "'none'", 'https://*.acme.com:*', 'http://localhost:*'])(
    'accepts %j',
    (source) => {
      expect(isFrameAncestorSource(source)).toBe(true);
    },
  );

  it.each(['*', "'unsafe-inline'", 'https://a.com/x', 'data:', 'https://a.com;'])('refuses %j', (source) => {
    expect(isFrameAncestorSource(source)).toBe(false);
  });
});

describe('splitOriginList', () => {
  it('splits on commas and trims each origin', () => {
    expect(splitOriginList('https://app.acme.com, https://*.acme.com ,http://localhost:3000')).toEqual([
      'https://app.acme.com',
      'https://*.acme.com',
      'http://localhost:3000',
    ]);
  });

  it.each(['', '  ', ',', ' , ,'])(
    'reads %j as no origin at all (how an operator clears the list)',
    (text) => {
      expect(splitOriginList(text)).toEqual([]);
    },
  );
});
