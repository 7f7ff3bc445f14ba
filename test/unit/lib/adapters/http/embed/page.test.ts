import { describe, expect, it } from 'vitest';
import { FRAME_SCRIPT } from '#lib/adapters/http/embed/frame-script';
import { escapeHtml } from '#lib/adapters/http/embed/html';
import {
  DEFAULT_PRESENTATION,
  EMBED_ERROR_CODES,
  formatInstant,
  LOCALES,
  type Presentation,
  TEXTS,
} from '#lib/adapters/http/embed/i18n';
import {
  displayName,
  embedContext,
  renderEmbedError,
  renderEmbedPage as renderPage,
} from '#lib/adapters/http/embed/page';
import type { Board } from '#lib/domain/board';
import type { StoredSession } from '#lib/domain/session';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { EMBED_CONTEXT_SESSION_FIELDS, keysOf, sorted, storedSession } from '#test/support/fixtures';

const BOARD: Board = { boardId: 'board-42', orgId: 'org-a', visibility: 'PUBLIC', name: 'Product roadmap' };

const { tokenHash: _hash, ...SESSION } = storedSession({
  id: 'session-1',
  boardId: 'board-42',
  userId: 'customer-7',
  email: 'grace@example.com',
  firstName: null,
  lastName: null,
  avatarUrl: null,
  plan: null,
  metadata: {},
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-31T00:00:00.000Z',
});

function view(session: Partial<EmbedView['session']> = {}, board: Partial<Board> = {}): EmbedView {
  return { session: { ...SESSION, ...session }, board: { ...BOARD, ...board } };
}

/** A day before SESSION expires. */
const NOW = new Date('2026-01-30T00:00:00.000Z');

/** The board page of `v`, in English and the automatic theme unless told otherwise. */
const renderEmbedPage = (v: EmbedView, presentation: Presentation = DEFAULT_PRESENTATION) =>
  renderPage(v, { presentation, now: NOW });

/** The page's own script, as it appears in the page: hashed into the CSP, never varying. */
const OWN_SCRIPT = `<script>${FRAME_SCRIPT}</script>`;

const ISLAND = /<script type="application\/json" id="embed-context">(.*?)<\/script>/s;

/** The JSON island's raw text; fails the test when the page has none. */
function islandText(html: string): string {
  const match = ISLAND.exec(html);
  expect(match, 'the page has a JSON island').not.toBeNull();
  return match?.[1] ?? '';
}

const island = (html: string) => JSON.parse(islandText(html)) as ReturnType<typeof embedContext>;

/** The page without the JSON island's content nor its own script: what the parser treats as markup and text. */
const markup = (html: string) =>
  html
    .replace(ISLAND, '<script type="application/json" id="embed-context"></script>')
    .replace(OWN_SCRIPT, '<script></script>');

/** Text of the element carrying `data-testid`, or undefined when absent. */
function byTestId(html: string, testId: string): string | undefined {
  return new RegExp(`<[a-z0-9]+ [^>]*data-testid="${testId}"[^>]*>(.*?)</`, 's').exec(html)?.[1];
}

/** Every start tag of the markup, as written. */
const tags = (html: string) => html.match(/<[a-z][^>]*>/gi) ?? [];

/** Names of every attribute of every tag (quoted values removed, so text inside a value is no name). */
const attributeNames = (html: string) =>
  tags(html).flatMap((tag) =>
    [...tag.replace(/"[^"]*"/g, '').matchAll(/\s([^\s=/>]+)/g)].map((m) => (m[1] ?? '').toLowerCase()),
  );

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('renderEmbedPage: board name', () => {
  it('shows the board name in the heading and the title', () => {
    const html = renderEmbedPage(view());
    expect(byTestId(html, 'board-name')).toBe('Product roadmap');
    expect(html).toContain('<title>Product roadmap</title>');
  });

  it.each([
    ['null', null],
    ['empty', ''],
    ['blank', '  \t '],
  ])('falls back to the board id when the name is %s', (_label, name) => {
    const html = renderEmbedPage(view({}, { name }));
    expect(byTestId(html, 'board-name')).toBe('board-42');
    expect(html).toContain('<title>board-42</title>');
  });
});

describe('renderEmbedPage: the signed-in user', () => {
  it.each([
    ['first and last name', { firstName: 'Grace', lastName: 'Hopper' }, 'Grace Hopper'],
    ['the first name alone', { firstName: 'Grace' }, 'Grace'],
    ['the last name alone', { lastName: 'Hopper' }, 'Hopper'],
    ['the e-mail without a name', {}, 'grace@example.com'],
    ['the e-mail when both names are blank', { firstName: ' ', lastName: '\t' }, 'grace@example.com'],
    ['the first name when the last is blank', { firstName: 'Grace', lastName: '  ' }, 'Grace'],
  ])('shows %s as the display name', (_label, names, expected) => {
    const session = { ...SESSION, ...names };
    expect(displayName(session)).toBe(expected);
    expect(byTestId(renderEmbedPage(view(names)), 'user-name')).toBe(expected);
  });

  it.each([
    [{ firstName: 'Grace', lastName: 'Hopper' }, 'GH'],
    [{ firstName: 'grace' }, 'G'],
    [{}, 'GE'],
  ])('shows initials %#  when there is no avatar', (names, initials) => {
    const html = renderEmbedPage(view(names));
    expect(html).toContain(`<span class="avatar initials" aria-hidden="true">${initials}</span>`);
    expect(html).not.toContain('<img');
  });

  it('lays the avatar image, without a referrer, over the initials, which show when it fails to load', () => {
    const html = renderEmbedPage(
      view({ firstName: 'Grace', avatarUrl: 'https://img.example.com/g.png?s=64&r=g' }),
    );
    const avatar = /<span class="avatar initials" aria-hidden="true">G(<img [^>]*>)<\/span>/.exec(html);
    expect(avatar, 'the image inside the initials').not.toBeNull();
    const img = avatar?.[1] ?? '';
    expect(img).toContain('class="avatar-image"');
    expect(img).toContain('src="https://img.example.com/g.png?s=64&amp;r=g"');
    expect(img).toContain('referrerpolicy="no-referrer"');
    expect(img).toContain('alt=""');
  });

  it('shows the plan badge when a plan is given', () => {
    expect(byTestId(renderEmbedPage(view({ plan: 'enterprise' })), 'plan')).toBe('enterprise');
  });

  it.each([
    ['null', null],
    ['blank', '   '],
  ])('shows no plan badge when the plan is %s', (_label, plan) => {
    const html = renderEmbedPage(view({ plan }));
    expect(html).not.toContain('data-testid="plan"');
    expect(html).not.toContain('class="plan"');
  });
});

describe('renderEmbedPage: every user-supplied value is escaped', () => {
  const payloads = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "'onmouseover='alert(1)"];

  type Case = { field: string; build: (payload: string) => EmbedView; shown: boolean };
  const cases: Case[] = [
    { field: 'firstName', build: (p) => view({ firstName: p }), shown: true },
    { field: 'lastName', build: (p) => view({ lastName: p }), shown: true },
    { field: 'email', build: (p) => view({ email: p }), shown: true },
    { field: 'plan', build: (p) => view({ plan: p }), shown: true },
    { field: 'avatarUrl', build: (p) => view({ avatarUrl: p }), shown: true },
    { field: 'board name', build: (p) => view({}, { name: p }), shown: true },
    { field: 'board id', build: (p) => view({ boardId: p }, { boardId: p, name: null }), shown: true },
    { field: 'userId', build: (p) => view({ userId: p }), shown: false },
    {
      field: 'a metadata value',
      build: (p) => view({ metadata: { note: p, deep: { list: [p] } } }),
      shown: false,
    },
    { field: 'a metadata key', build: (p) => view({ metadata: { [p]: 'value' } }), shown: false },
  ];

  describe.each(cases)('$field', ({ build, shown }) => {
    it.each(payloads)('renders %j only in escaped form', (payload) => {
      const html = renderEmbedPage(build(payload));
      const page = markup(html);
      expect(page).not.toContain(payload);
      if (shown) expect(page).toContain(escapeHtml(payload));
      // Nothing but the island and the page's own script is a script, and nothing the payload brought
      // became an element.
      expect(count(html.toLowerCase(), '<script')).toBe(2);
      expect(count(html.toLowerCase(), '</script')).toBe(2);
      expect(count(html, OWN_SCRIPT)).toBe(1);
      expect(attributeNames(page).filter((name) => name.startsWith('on'))).toEqual([]);
      expect(tags(page).filter((tag) => tag.startsWith('<img') && !tag.includes('referrerpolicy'))).toEqual(
        [],
      );
    });

    it.each(payloads)('keeps %j inert yet intact in the JSON island', (payload) => {
      const html = renderEmbedPage(build(payload));
      const text = islandText(html);
      expect(text).not.toMatch(/[<>&]/);
      expect(JSON.stringify(island(html))).toContain(JSON.stringify(payload));
    });
  });
});

describe('renderEmbedPage: the JSON island', () => {
  it('holds the board and the session fields, parsed back exactly', () => {
    const metadata = { team: 'ops', seats: 3, flags: [true, null], nested: { a: '</script>' } };
    const full = view({
      metadata,
      firstName: 'Grace',
      lastName: 'Hopper',
      avatarUrl: 'https://img.example.com/g.png',
      plan: 'pro',
    });
    const session = Object.fromEntries(
      EMBED_CONTEXT_SESSION_FIELDS.map((field) => [field, full.session[field as keyof typeof full.session]]),
    );
    expect(island(renderEmbedPage(full))).toEqual({
      board: { id: 'board-42', name: 'Product roadmap' },
      session,
    });
  });

  it('says nothing of who created or revoked the session, nor of its organization', () => {
    const text = JSON.stringify(island(renderEmbedPage(view({ createdByKeyId: 'key_secretive' }))));
    for (const field of ['orgId', 'createdByUserId', 'createdByKeyId', 'revokedByUserId', 'key_secretive']) {
      expect(text).not.toContain(field);
    }
  });

  it('never carries the token hash nor a token, even when the view object holds them', () => {
    const tokenHash = 'a'.repeat(64);
    const token = 'T0KEN_t0ken-T0KEN_t0ken-T0KEN_t0';
    const stored: StoredSession & { token: string } = { ...SESSION, tokenHash, token };
    const html = renderEmbedPage({ session: stored, board: BOARD });
    const context = island(html);
    expect(context.session).not.toHaveProperty('tokenHash');
    expect(context.session).not.toHaveProperty('token');
    expect(html).not.toContain(tokenHash);
    expect(html).not.toContain(token);
    expect(html).not.toContain('tokenHash');
  });

  it('is, with the page’s own script, one of exactly two scripts, each closed once', () => {
    const html = renderEmbedPage(view({ metadata: { a: '</script>', b: '</SCRIPT>' } }));
    expect(count(html.toLowerCase(), '</script>')).toBe(2);
    expect(count(html.toLowerCase(), '<script')).toBe(2);
    expect(html).toContain('<script type="application/json" id="embed-context">');
    expect(count(html, OWN_SCRIPT)).toBe(1);
  });
});

describe('renderEmbedPage: the document', () => {
  const html = renderEmbedPage(view());

  it('is a complete HTML document', () => {
    expect(html).toMatch(/^<!doctype html>\n<html lang="en" data-theme="auto">/);
    expect(html).toContain('<meta charset="utf-8">');
    expect(html.trimEnd()).toMatch(/<\/html>$/);
  });

  it('tells the browser to send no referrer, since the URL holds a credential', () => {
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
  });

  it('has a responsive viewport', () => {
    expect(html).toMatch(/<meta name="viewport" content="width=device-width,\s*initial-scale=1">/);
  });

  it('keeps the page out of search engines', () => {
    expect(html).toContain('<meta name="robots" content="noindex,nofollow">');
  });

  it('has exactly one inline stylesheet and no style attributes', () => {
    expect(count(html, '<style>')).toBe(1);
    expect(html).not.toMatch(/\sstyle=/);
  });
});

describe('renderEmbedPage: what the service knows, and the hand-over to the board', () => {
  const html = renderEmbedPage(view({ firstName: 'Grace', lastName: 'Hopper' }));

  it('draws no made-up columns or cards, only an empty state where the board’s application goes', () => {
    for (const invented of ['To do', 'In progress', 'Done', 'Nothing here yet', 'class="column"']) {
      expect(html).not.toContain(invented);
    }
    expect(byTestId(html, 'board-empty')).toBe(`<h2>${escapeHtml(TEXTS.en.emptyTitle)}`);
  });

  it('marks the element the board’s own front end takes over, with the board’s id', () => {
    expect(html).toContain(
      '<main class="board" id="embed-board" data-board-id="board-42" data-testid="board">',
    );
  });

  it('says who is signed in', () => {
    expect(html).toContain(`<span class="user-label">${TEXTS.en.signedInAs}</span>`);
    expect(byTestId(html, 'user-name')).toBe('Grace Hopper');
  });

  it('shows when the session expires, in UTC until the script shows it in the viewer’s time zone', () => {
    expect(html).toContain(
      `${TEXTS.en.expires} <time datetime="2026-01-31T00:00:00.000Z" data-local>${formatInstant('2026-01-31T00:00:00.000Z')}</time>`,
    );
  });

  it('tells its script how long the session has left, counted from the server’s clock', () => {
    expect(html).toContain('<body data-embed-state="ready" data-expires-in-ms="86400000">');
    expect(
      renderPage(view(), { presentation: DEFAULT_PRESENTATION, now: new Date('2027-01-01T00:00:00Z') }),
    ).toContain('data-expires-in-ms="0"');
  });

  it('keeps the expired view ready in an inert template, so it can switch without a reload', () => {
    const template = /<template id="embed-expired">(.*?)<\/template>/s.exec(html)?.[1] ?? '';
    expect(template).toContain('data-code="session_expired"');
    expect(template).toContain(escapeHtml(TEXTS.en.notices.session_expired.sentence));
    expect(template).toContain(escapeHtml(TEXTS.en.notices.session_expired.action));
  });

  it('measures its content in one element, which never stretches to the frame', () => {
    expect(html).toContain('<div class="embed" id="embed-root">');
  });
});

describe('renderEmbedPage: theme and language', () => {
  it.each(['light', 'dark', 'auto'] as const)('sets data-theme="%s" on the root element', (theme) => {
    expect(renderEmbedPage(view(), { theme, locale: 'en' })).toContain(
      `<html lang="en" data-theme="${theme}">`,
    );
  });

  it.each(LOCALES)('speaks %s everywhere it speaks', (locale) => {
    const html = renderEmbedPage(view({ firstName: 'Grace' }), { theme: 'auto', locale });
    const texts = TEXTS[locale];
    expect(html).toContain(`<html lang="${locale}"`);
    for (const text of [
      texts.signedInAs,
      texts.expires,
      texts.emptyTitle,
      texts.emptyBody,
      texts.notices.session_expired.sentence,
    ]) {
      expect(html).toContain(escapeHtml(text));
    }
  });

  it('writes the expiry in UTC for every language, marked for the frame’s script to write in the viewer’s', () => {
    for (const locale of ['de', 'en'] as const) {
      expect(renderEmbedPage(view(), { theme: 'auto', locale })).toContain(
        '<time datetime="2026-01-31T00:00:00.000Z" data-local>2026-01-31 00:00 UTC</time>',
      );
    }
  });
});

describe('renderEmbedError', () => {
  it('shows the sentence and the action of its code, and titles the page with the sentence', () => {
    const html = renderEmbedError('invalid_token', DEFAULT_PRESENTATION);
    expect(html).toContain('<h1>This link to the board is not valid.</h1>');
    expect(html).toContain('<p class="action" data-testid="embed-action">Reload the page to try again.</p>');
    expect(html).toContain('<title>This link to the board is not valid.</title>');
    expect(html).toContain('role="alert"');
    expect(html).toContain('<meta name="referrer" content="no-referrer">');
  });

  it('names its code for the page’s script, which reports it to the host', () => {
    const html = renderEmbedError('session_revoked', DEFAULT_PRESENTATION);
    expect(html).toContain('<body data-embed-state="error" data-embed-code="session_revoked">');
    expect(html).toContain('data-code="session_revoked"');
  });

  it('carries the page’s own script and no other', () => {
    const html = renderEmbedError('board_gone', DEFAULT_PRESENTATION);
    expect(count(html, '<script')).toBe(1);
    expect(count(html, OWN_SCRIPT)).toBe(1);
    expect(html).not.toContain('id="embed-context"');
  });

  it('measures the notice alone, so the host can size the frame to it', () => {
    expect(renderEmbedError('missing_token', DEFAULT_PRESENTATION)).toContain(
      '<div class="embed notice-page" id="embed-root">',
    );
  });

  it.each(EMBED_ERROR_CODES)('renders %s in every language the page ships', (code) => {
    for (const locale of LOCALES) {
      const html = renderEmbedError(code, { theme: 'auto', locale });
      expect(html).toContain(`<html lang="${locale}"`);
      expect(html).toContain(`<h1>${escapeHtml(TEXTS[locale].notices[code].sentence)}</h1>`);
      expect(html).toContain(escapeHtml(TEXTS[locale].notices[code].action));
    }
  });

  it('applies the requested theme', () => {
    expect(renderEmbedError('session_expired', { theme: 'dark', locale: 'es' })).toMatch(
      /^<!doctype html>\n<html lang="es" data-theme="dark">/,
    );
  });
});

/** The text a reader sees in a notice, one entry per element: its sentence, its action. */
function noticeTexts(html: string): string[] {
  const notice = /<div class="notice"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
  return [...notice.matchAll(/<([a-z0-9]+)[^>]*>([^<]*)<\/\1>/g)].map((m) => m[2] ?? '');
}

describe('what the end user reads instead of the board', () => {
  const pages = LOCALES.flatMap((locale) => [
    ...EMBED_ERROR_CODES.map((code) => ({
      what: `the ${code} page in ${locale}`,
      html: renderEmbedError(code, { theme: 'auto', locale }),
    })),
    {
      what: `the expired view of the board page in ${locale}`,
      html:
        /<template id="embed-expired">([\s\S]*?)<\/template>/.exec(
          renderEmbedPage(view(), { theme: 'auto', locale }),
        )?.[1] ?? '',
    },
  ]);

  it.each(pages)('$what: one sentence and one action, each once', ({ html }) => {
    const texts = noticeTexts(html);
    expect(texts).toHaveLength(2);
    expect(html).toMatch(/<h1>[^<]+<\/h1>\n<p class="action" data-testid="embed-action">[^<]+<\/p>\n<\/div>/);
    const [sentence, action] = texts;
    expect(sentence).not.toBe(action);
    // Each is one sentence: it ends with a full stop, and nothing else in it ends a sentence.
    for (const text of texts) expect(text).toMatch(/^[^.;!?]+\.$/);
  });

  it.each(pages)('$what: no status code and no developer words', ({ html }) => {
    const text = noticeTexts(html).join(' ');
    expect(text).not.toMatch(/\d/);
    expect(html).not.toContain('class="code"');
    expect(text).not.toMatch(/token|jeton|embed|einbett|intégr|inserci|session|sitzung|sesión|API|HTTP/i);
  });

  it('says the same thing in the same words wherever the same thing happened', () => {
    for (const locale of LOCALES) {
      const { notices } = TEXTS[locale];
      // Every ended access is reopened the same way, and every failed link is retried the same way.
      const reopen = new Set(
        (['session_expired', 'session_revoked', 'bound_to_another_browser', 'ended'] as const).map(
          (code) => notices[code].action,
        ),
      );
      expect([...reopen], locale).toHaveLength(1);
      const retry = new Set(
        (['missing_token', 'invalid_token', 'internal'] as const).map((code) => notices[code].action),
      );
      expect([...retry], locale).toHaveLength(1);
    }
  });
});

describe('embedContext', () => {
  it('has exactly the documented keys', () => {
    const context = embedContext(view());
    expect(Object.keys(context).sort()).toEqual(['board', 'session']);
    expect(Object.keys(context.board).sort()).toEqual(['id', 'name']);
    expect(keysOf(context.session)).toEqual(sorted(EMBED_CONTEXT_SESSION_FIELDS));
  });

  it('exposes neither the board’s organization nor its visibility', () => {
    const context = embedContext(view());
    expect(context.board).toEqual({ id: 'board-42', name: 'Product roadmap' });
    expect(JSON.stringify(context)).not.toContain('org-a');
  });
});
