import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EXPIRES_IN_SECONDS,
  parseCreateSessionRequest,
  type RequestLimits,
} from '#lib/adapters/http/validation/create-session';
import { ValidationError } from '#lib/domain/errors';
import { DEFAULT_METADATA_MAX_BYTES } from '#lib/platform/config';
import type { CreateSessionRequest } from '#lib/use-cases/create-session';
import { DEFAULT_LIFETIME_SECONDS, OMITTED_OPTIONALS, validBody } from '#test/support/fixtures';

const LIMITS: RequestLimits = { metadataMaxBytes: DEFAULT_METADATA_MAX_BYTES };

const valid = (extra: Record<string, unknown> = {}) =>
  validBody({ boardId: 'board-1', userId: 'user-1', ...extra });

const parse = (body: unknown, limits = LIMITS): CreateSessionRequest =>
  parseCreateSessionRequest(body, limits);

/** The message of the ValidationError that `body` must raise. */
function rejection(body: unknown, limits = LIMITS): string {
  let caught: unknown;
  try {
    parse(body, limits);
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected the body to be rejected with a ValidationError').toBeInstanceOf(ValidationError);
  return (caught as Error).message;
}

/** `depth` nested objects, the outermost (metadata itself) being level 1. */
function nestedObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

/** Metadata `{ "s": "xxx..." }` whose JSON serialization is exactly `bytes` bytes. */
function metadataOfSize(bytes: number): Record<string, unknown> {
  const overhead = JSON.stringify({ s: '' }).length;
  return { s: 'x'.repeat(bytes - overhead) };
}

describe('parseCreateSessionRequest: a valid body', () => {
  it('accepts the three required fields and fills every optional field with its default', () => {
    expect(parse(valid())).toEqual({
      boardId: 'board-1',
      userId: 'user-1',
      email: 'ada@example.com',
      ...OMITTED_OPTIONALS,
      expiresInSeconds: DEFAULT_LIFETIME_SECONDS,
    });
  });

  it('turns optional fields sent as null into null, metadata into {} and expiresInSeconds into the default', () => {
    const optionals = ['firstName', 'lastName', 'avatarUrl', 'plan', 'metadata', 'expiresInSeconds'];
    const request = parse(valid(Object.fromEntries(optionals.map((field) => [field, null]))));
    expect(request).toMatchObject({ firstName: null, lastName: null, avatarUrl: null, plan: null });
    expect(request.metadata).toEqual({});
    expect(request.expiresInSeconds).toBe(DEFAULT_EXPIRES_IN_SECONDS);
  });

  it('keeps every field that is given', () => {
    const metadata = { team: 'analytics', seats: 12, tags: ['a', 'b'], nested: { ok: true, none: null } };
    const optionals = {
      firstName: 'Ada',
      lastName: 'Lovelace',
      avatarUrl: 'https://cdn.example.com/ada.png',
      plan: 'enterprise',
      metadata,
      expiresInSeconds: 3600,
      bindToBrowser: true,
    };
    expect(parse(valid(optionals))).toEqual({
      boardId: 'board-1',
      userId: 'user-1',
      email: 'ada@example.com',
      ...optionals,
    });
  });

  it('uses 30 days (2592000 seconds) as the default lifetime', () => {
    expect(DEFAULT_EXPIRES_IN_SECONDS).toBe(30 * 24 * 60 * 60);
    expect(parse(valid()).expiresInSeconds).toBe(2_592_000);
  });
});

describe('parseCreateSessionRequest: required fields', () => {
  it.each(['boardId', 'userId', 'email'])('rejects a body without %s and names it', (field) => {
    const body: Record<string, unknown> = valid();
    delete body[field];
    expect(rejection(body)).toBe(`${field} is required`);
  });

  it.each([
    ['null', null],
    ['an array', [valid()]],
    ['a string', 'boardId'],
    ['a number', 42],
  ])('rejects a body that is %s', (_name, body) => {
    expect(rejection(body)).toMatch(/object/);
  });
});

describe('parseCreateSessionRequest: strict types, no coercion', () => {
  it.each([
    ['boardId', 42, 'boardId must be a string'],
    ['userId', true, 'userId must be a string'],
    ['email', ['ada@example.com'], 'email must be a string'],
    ['firstName', 1, 'firstName must be a string or null'],
    ['lastName', { text: 'x' }, 'lastName must be a string or null'],
    ['avatarUrl', 5, 'avatarUrl must be a string or null'],
    ['plan', 0, 'plan must be a string or null'],
    ['metadata', 'team=a', 'metadata must be a JSON object or null'],
    ['metadata', [1, 2], 'metadata must be a JSON object or null'],
    ['metadata', 7, 'metadata must be a JSON object or null'],
    ['expiresInSeconds', '60', 'expiresInSeconds must be an integer'],
    ['expiresInSeconds', true, 'expiresInSeconds must be an integer'],
  ])('rejects %s = %j with a message naming the field and the type', (field, value, message) => {
    expect(rejection(valid({ [field]: value }))).toBe(message);
  });

  it('does not coerce a numeric userId into a string', () => {
    expect(rejection(valid({ userId: 12345 }))).toBe('userId must be a string');
  });
});

describe('parseCreateSessionRequest: ids', () => {
  it.each(['boardId', 'userId'])('accepts a %s of 1 and of 256 characters', (field) => {
    expect(parse(valid({ [field]: 'x' }))[field as 'boardId']).toBe('x');
    expect(parse(valid({ [field]: 'x'.repeat(256) }))[field as 'boardId']).toHaveLength(256);
  });

  it.each(['boardId', 'userId'])('counts %s length in characters, not UTF-16 units', (field) => {
    expect(() => parse(valid({ [field]: '😀'.repeat(256) }))).not.toThrow();
    expect(rejection(valid({ [field]: '😀'.repeat(257) }))).toBe(`${field} must be at most 256 characters`);
  });

  it.each(['boardId', 'userId'])('rejects a %s of 257 characters', (field) => {
    expect(rejection(valid({ [field]: 'x'.repeat(257) }))).toBe(`${field} must be at most 256 characters`);
  });

  it.each(['boardId', 'userId'])('rejects an empty %s', (field) => {
    expect(rejection(valid({ [field]: '' }))).toBe(`${field} must not be empty`);
  });

  it.each([
    ['boardId', '   '],
    ['userId', '   '],
    ['boardId', '\t\n'],
    ['userId', '\u00a0'],
  ])('rejects a blank %s (%j)', (field, value) => {
    expect(rejection(valid({ [field]: value }))).toBe(`${field} must not be blank`);
  });
});

describe('parseCreateSessionRequest: the e-mail address and the avatar URL', () => {
  /** Well-formed values of each checked field: kept exactly as given. */
  const ACCEPTED = {
    email: [
      'ada@example.com',
      'first.last+tag@sub.example.co.uk',
      "o'brien@example.ie",
      'x_1@a-b.io',
      'UPPER@EXAMPLE.COM',
    ],
    avatarUrl: [
      'https://cdn.example.com/ada.png',
      'http://example.com/a.png?size=64#x',
      'HTTPS://EXAMPLE.COM/A.PNG',
      'https://127.0.0.1:8443/a.png',
    ],
  };

  /** Malformed values of each checked field, and the message that refuses them. */
  const REFUSED = {
    email: {
      message: 'email must be a valid e-mail address',
      values: [
        'not-an-email',
        'ada@',
        '@example.com',
        'ada@example',
        'ada@@example.com',
        'ada example@example.com',
        'ada@exa mple.com',
        ' ada@example.com',
        'ada@example.com ',
        '.ada@example.com',
        'ada..lovelace@example.com',
        'ada@-example.com',
        'ada@example.com\n',
        '',
      ],
    },
    avatarUrl: {
      message: 'avatarUrl must be an absolute http or https URL',
      values: [
        'javascript:alert(1)',
        'JavaScript:alert(document.cookie)',
        'data:image/png;base64,iVBORw0KGgo=',
        'file:///etc/passwd',
        'ftp://example.com/ada.png',
        '/avatars/ada.png',
        'avatars/ada.png',
        '//cdn.example.com/ada.png',
        'https://',
        'http:///ada.png',
        'https:// example.com/ada.png',
        'https://exa mple.com/ada.png',
        ' https://example.com/ada.png',
        'https://example.com/ada.png ',
        'https://example.com/a da.png',
        'https://example.com/ada\u0000.png',
        'https://example.com/ada.png\n',
        'https://example.com/\u007f',
        '',
      ],
    },
  };

  it.each(
    Object.entries(ACCEPTED).flatMap(([field, values]) => values.map((value) => [field, value] as const)),
  )('accepts the %s %s as given', (field, value) => {
    expect(parse(valid({ [field]: value }))[field as 'email']).toBe(value);
  });

  it.each(
    Object.entries(REFUSED).flatMap(([field, { message, values }]) =>
      values.map((value) => [field, value, message] as const),
    ),
  )('refuses the %s %j', (field, value, message) => {
    expect(rejection(valid({ [field]: value }))).toBe(message);
  });
});

describe('parseCreateSessionRequest: email', () => {
  it('accepts an address of 254 characters and rejects one of 255', () => {
    const address = (lastLabel: number) =>
      `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(lastLabel)}`;
    expect(address(61)).toHaveLength(254);
    expect(parse(valid({ email: address(61) })).email).toBe(address(61));
    expect(rejection(valid({ email: address(62) }))).toBe('email must be at most 254 characters');
  });
});

describe('parseCreateSessionRequest: names and plan', () => {
  it.each(['firstName', 'lastName', 'plan'])('accepts a %s of 256 characters and rejects 257', (field) => {
    expect(parse(valid({ [field]: 'n'.repeat(256) }))[field as 'plan']).toHaveLength(256);
    expect(rejection(valid({ [field]: 'n'.repeat(257) }))).toBe(`${field} must be at most 256 characters`);
  });

  it.each(['firstName', 'lastName', 'plan'])('accepts an empty %s as given', (field) => {
    expect(parse(valid({ [field]: '' }))[field as 'plan']).toBe('');
  });
});

describe('parseCreateSessionRequest: avatarUrl', () => {
  it.each(['https://user:secret@cdn.example.com/a.png', 'https://user@cdn.example.com/a.png'])(
    'rejects %s, whose credentials every viewer of the page would see',
    (avatarUrl) => {
      expect(rejection(valid({ avatarUrl }))).toBe('avatarUrl must not contain a user name or password');
    },
  );

  it('accepts an @ in the path, which is not a credential', () => {
    const avatarUrl = 'https://cdn.example.com/users/@ada/avatar.png';
    expect(parse(valid({ avatarUrl })).avatarUrl).toBe(avatarUrl);
  });

  it('accepts 2048 characters and rejects 2049', () => {
    const url = (length: number) => {
      const base = 'https://cdn.example.com/';
      return base + 'a'.repeat(length - base.length);
    };
    expect(parse(valid({ avatarUrl: url(2048) })).avatarUrl).toHaveLength(2048);
    expect(rejection(valid({ avatarUrl: url(2049) }))).toBe('avatarUrl must be at most 2048 characters');
  });
});

describe('parseCreateSessionRequest: unknown fields', () => {
  it.each(['extra', 'token', 'BoardId', 'sessionToken', 'expiresAt'])(
    'rejects the field %s, naming it',
    (field) => {
      expect(rejection(valid({ [field]: 'x' }))).toBe(`${field} is not an allowed field`);
    },
  );

  it('rejects a top-level "__proto__" field as an unknown field', () => {
    const body = JSON.parse('{"boardId":"b","userId":"u","email":"ada@example.com","__proto__":{"x":1}}');
    expect(rejection(body)).toBe('__proto__ is not an allowed field');
  });
});

describe('parseCreateSessionRequest: expiresInSeconds', () => {
  it.each([
    [0, 'expiresInSeconds must be at least 1'],
    [-1, 'expiresInSeconds must be at least 1'],
    [-3600, 'expiresInSeconds must be at least 1'],
    [1.5, 'expiresInSeconds must be an integer'],
    [0.5, 'expiresInSeconds must be an integer'],
    ['60', 'expiresInSeconds must be an integer'],
  ])('rejects %j', (expiresInSeconds, message) => {
    expect(rejection(valid({ expiresInSeconds }))).toBe(message);
  });

  it.each([1, 60, 2_592_000, 315_360_000])('accepts the integer %d', (expiresInSeconds) => {
    expect(parse(valid({ expiresInSeconds })).expiresInSeconds).toBe(expiresInSeconds);
  });

  it('accepts an integer written with an exponent or a zero fraction (it is still an integer)', () => {
    expect(
      parse(JSON.parse('{"boardId":"b","userId":"u","email":"a@b.co","expiresInSeconds":6e1}')),
    ).toMatchObject({ expiresInSeconds: 60 });
    expect(
      parse(JSON.parse('{"boardId":"b","userId":"u","email":"a@b.co","expiresInSeconds":60.0}')),
    ).toMatchObject({ expiresInSeconds: 60 });
  });
});

describe('parseCreateSessionRequest: bindToBrowser', () => {
  it.each([
    ['omitted', {}, false],
    ['null', { bindToBrowser: null }, false],
    ['false', { bindToBrowser: false }, false],
    ['true', { bindToBrowser: true }, true],
  ])('reads bindToBrowser %s as %s', (_label, extra, expected) => {
    expect(parse(valid(extra)).bindToBrowser).toBe(expected);
  });

  it.each([['true'], [1], [0], ['yes'], [{}], [[true]]])('rejects %j: only true, false or null', (value) => {
    expect(rejection(valid({ bindToBrowser: value }))).toBe('bindToBrowser must be true or false');
  });
});

describe('parseCreateSessionRequest: metadata limits', () => {
  it('accepts metadata nested 32 levels deep', () => {
    const metadata = nestedObject(32);
    expect(parse(valid({ metadata })).metadata).toEqual(metadata);
  });

  it('rejects metadata nested 33 levels deep', () => {
    expect(rejection(valid({ metadata: nestedObject(33) }))).toBe(
      'metadata must be nested at most 32 levels deep',
    );
  });

  it('counts arrays as nesting levels', () => {
    let inner: unknown = [];
    for (let level = 3; level <= 32; level++) inner = [inner];
    expect(() => parse(valid({ metadata: { a: inner } }))).not.toThrow();
    expect(rejection(valid({ metadata: { a: [inner] } }))).toBe(
      'metadata must be nested at most 32 levels deep',
    );
  });

  it('rejects a hostile, very deeply nested document with a 400, not a stack overflow', () => {
    // About 20 KB of JSON: well inside the body limit, far deeper than any recursive walk survives.
    const raw = `{"boardId":"b","userId":"u","email":"a@b.co","metadata":{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    expect(rejection(JSON.parse(raw))).toBe('metadata must be nested at most 32 levels deep');
  });

  it('accepts metadata of exactly the default 32 KiB when serialized and rejects one byte more', () => {
    const fits = metadataOfSize(32 * 1024);
    expect(Buffer.byteLength(JSON.stringify(fits))).toBe(32_768);
    expect(parse(valid({ metadata: fits })).metadata).toEqual(fits);
    expect(rejection(valid({ metadata: metadataOfSize(32 * 1024 + 1) }))).toMatch(
      /^metadata must be at most 32768 bytes when serialized as JSON/,
    );
  });

  it('measures metadata size in UTF-8 bytes, not characters', () => {
    // 'é' is 2 bytes: 16,381 of them serialize to 32,762 + 8 bytes of {"s":""}, over 32 KiB.
    const metadata = { s: 'é'.repeat(16_381) };
    expect(JSON.stringify(metadata).length).toBeLessThan(32_768);
    expect(rejection(valid({ metadata }))).toMatch(/^metadata must be at most 32768 bytes/);
  });

  it('applies a configured metadata size limit', () => {
    const limits: RequestLimits = { metadataMaxBytes: 100 };
    expect(() => parse(valid({ metadata: metadataOfSize(100) }), limits)).not.toThrow();
    expect(rejection(valid({ metadata: metadataOfSize(101) }), limits)).toMatch(
      /^metadata must be at most 100 bytes/,
    );
  });

  it.each([
    ['an integer beyond 2^53', '9007199254740993'],
    ['a large negative integer', '-18014398509481984'],
    ['a magnitude below 1e-130', '1e-200'],
    ['a magnitude of 1e200', '1e200'],
    ['a magnitude of 1e126', '1e126'],
    ['a negative magnitude below 1e-130', '-1e-131'],
  ])('rejects %s (%s) that DynamoDB cannot store exactly', (_name, literal) => {
    const body = JSON.parse(
      `{"boardId":"b","userId":"u","email":"a@b.co","metadata":{"deep":[{"n":${literal}}]}}`,
    );
    expect(rejection(body)).toMatch(/^metadata\.deep\[0\]\.n is .*send it as a string$/);
  });

  it.each([
    ['0', 0],
    ['2^53 - 1', Number.MAX_SAFE_INTEGER],
    ['-(2^53 - 1)', -Number.MAX_SAFE_INTEGER],
    ['1e-130', 1e-130],
    ['1.5e-100', 1.5e-100],
    ['a fraction', 2.5],
  ])('accepts the number %s', (_name, n) => {
    expect(parse(valid({ metadata: { n } })).metadata).toEqual({ n });
  });

  it.each([
    ['boardId', { boardId: 'board-\ud800' }],
    ['userId', { userId: '\udc00user' }],
    ['firstName', { firstName: 'Ada\ud83d' }],
    ['lastName', { lastName: '\ude00' }],
    ['plan', { plan: 'pro\udfff' }],
    ['avatarUrl', { avatarUrl: 'https://example.com/\ud800.png' }],
    ['metadata.note', { metadata: { note: 'x\ud800y' } }],
    ['metadata key', { metadata: { 'k\udbff': 1 } }],
    ['metadata.list[1]', { metadata: { list: ['ok', '\udc00'] } }],
  ])('rejects a lone surrogate in %s', (path, extra) => {
    expect(rejection(valid(extra))).toBe(`${path} contains invalid Unicode (a lone surrogate)`);
  });

  it('accepts well-formed surrogate pairs (emoji)', () => {
    expect(parse(valid({ firstName: 'Ada 😀', metadata: { mood: '😀' } }))).toMatchObject({
      firstName: 'Ada 😀',
      metadata: { mood: '😀' },
    });
  });
});

describe('parseCreateSessionRequest: prototype keys in metadata', () => {
  it('keeps "__proto__" and "constructor" as own data keys without touching any prototype', () => {
    const body = JSON.parse(
      '{"boardId":"b","userId":"u","email":"a@b.co","metadata":' +
        '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"nested":{"__proto__":{"isAdmin":true}}}}',
    );
    const { metadata } = parse(body);

    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.hasOwn(metadata, '__proto__')).toBe(true);
    expect(Object.hasOwn(metadata, 'constructor')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(metadata, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(Object.getOwnPropertyDescriptor(metadata, 'constructor')?.value).toEqual({
      prototype: { polluted: 'yes' },
    });
    expect(JSON.stringify(metadata)).toBe(
      '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"nested":{"__proto__":{"isAdmin":true}}}',
    );
  });
});

describe('parseCreateSessionRequest: every problem at once', () => {
  it('lists every offending field of the schema in one message, one sentence per field', () => {
    expect(rejection({ userId: '', email: 'not-an-email', plan: 7, colour: 'red' })).toBe(
      'boardId is required; colour is not an allowed field; userId must not be empty; ' +
        'email must be a valid e-mail address; plan must be a string or null',
    );
  });

  it('lists every problem the checks after the schema find, too', () => {
    const body = valid({
      userId: 'u\uD800',
      avatarUrl: 'https://user:secret@example.com/a.png',
      metadata: metadataOfSize(DEFAULT_METADATA_MAX_BYTES + 1),
    });
    const message = rejection(body);
    expect(message.split('; ')).toEqual([
      'userId contains invalid Unicode (a lone surrogate)',
      'avatarUrl must not contain a user name or password',
      expect.stringMatching(/^metadata /),
    ]);
  });
});

describe('a stage maximum session lifetime', () => {
  const limited: RequestLimits = { ...LIMITS, maxSessionLifetimeSeconds: 86_400 };

  it('refuses a longer expiresInSeconds, naming the maximum, and accepts the maximum', () => {
    expect(() => parseCreateSessionRequest(validBody({ expiresInSeconds: 86_401 }), limited)).toThrow(
      new ValidationError(
        'expiresInSeconds must be at most 86400 on this deployment (its maximum session lifetime), got 86401',
      ),
    );
    expect(parseCreateSessionRequest(validBody({ expiresInSeconds: 86_400 }), limited).expiresInSeconds).toBe(
      86_400,
    );
  });

  it('gives a request without a lifetime the shorter of the maximum and the default', () => {
    expect(parseCreateSessionRequest(validBody({ expiresInSeconds: null }), limited).expiresInSeconds).toBe(
      86_400,
    );
    const generous = { ...LIMITS, maxSessionLifetimeSeconds: 10 * DEFAULT_LIFETIME_SECONDS };
    expect(parseCreateSessionRequest(validBody({ expiresInSeconds: null }), generous).expiresInSeconds).toBe(
      DEFAULT_LIFETIME_SECONDS,
    );
  });

  it('keeps the spec’s rule when the stage sets none', () => {
    expect(parseCreateSessionRequest(validBody({ expiresInSeconds: 10 ** 9 }), LIMITS).expiresInSeconds).toBe(
      10 ** 9,
    );
  });
});
