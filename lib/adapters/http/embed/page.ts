import { specSession } from '#lib/domain/session';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { FRAME_SCRIPT } from './frame-script';
import { escapeHtml, jsonIsland } from './html';
import {
  type EmbedErrorCode,
  formatInstant,
  type NoticeCode,
  type Presentation,
  TEXTS,
  type Texts,
} from './i18n';
import { EMBED_CSS } from './styles';

/** The public context handed to the board's front end: never the token, never its hash. */
export function embedContext(view: EmbedView) {
  const { session, board } = view;
  return {
    board: { id: board.boardId, name: board.name },
    session: specSession(session),
  };
}

/** Display name: first and last name when given, otherwise the e-mail address. */
export function displayName(session: EmbedView['session']): string {
  const name = [session.firstName, session.lastName]
    .filter((part) => part?.trim())
    .join(' ')
    .trim();
  return name || session.email;
}

function initials(name: string): string {
  const letters = name
    .split(/[\s@._-]+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => Array.from(word)[0]?.toUpperCase() ?? '');
  return letters.join('') || '?';
}

/**
 * A whole page: `lang` and `data-theme` come from the parsed presentation (values of our own, never the
 * request's text); `state` is what the page's script reports to the host. The built-in page's script
 * unless another is given (the hand-off page's).
 */
export function layout(
  presentation: Presentation,
  title: string,
  state: Record<string, string>,
  body: string,
  script = FRAME_SCRIPT,
): string {
  const attributes = Object.entries(state)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  return `<!doctype html>
<html lang="${presentation.locale}" data-theme="${presentation.theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex,nofollow">
<title>${escapeHtml(title)}</title>
<style>${EMBED_CSS}</style>
</head>
<body${attributes}>
${body}
<script>${script}</script>
</body>
</html>
`;
}

/**
 * The notice a page shows instead of the board: its one sentence as the heading and its one action, no
 * status code (the host page reads the status and the `code`, the end user never needs them).
 * `data-testid` names where it is shown: `embed-error` on a refusal, `embed-ended` on an ended view.
 */
export function notice(texts: Texts, code: NoticeCode, testId = 'embed-error'): string {
  const { sentence, action } = texts.notices[code];
  return `<div class="notice" role="alert" data-testid="${testId}" data-code="${code}">
<h1>${escapeHtml(sentence)}</h1>
<p class="action" data-testid="embed-action">${escapeHtml(action)}</p>
</div>`;
}

/** Options of the board page: how it looks, and the instant its expiry is counted from. */
export interface EmbedPageOptions {
  presentation: Presentation;
  now: Date;
}

/**
 * The embedded board for a usable session: what the service knows of it (the board's name, the signed-in
 * user, the session's expiry) around `#embed-board`, the element the board's own front end takes over,
 * with the JSON context island as its input. Every user-supplied value is escaped.
 */
export function renderEmbedPage(view: EmbedView, options: EmbedPageOptions): string {
  const { session, board } = view;
  const { presentation } = options;
  const texts = TEXTS[presentation.locale];
  const name = displayName(session);
  const boardName = board.name?.trim() || board.boardId;
  // The image lies over the initials: while it loads, and when it fails (the page's script removes a
  // failed image), the user sees the initials rather than a broken-image icon.
  const image = session.avatarUrl
    ? `<img class="avatar-image" src="${escapeHtml(session.avatarUrl)}" alt="" width="32" height="32" referrerpolicy="no-referrer">`
    : '';
  const avatar = `<span class="avatar initials" aria-hidden="true">${escapeHtml(initials(name))}${image}</span>`;
  const plan = session.plan?.trim()
    ? `<span class="plan" data-testid="plan" title="${escapeHtml(session.plan)}">${escapeHtml(session.plan)}</span>`
    : '';
  const expiresInMs = Math.max(0, Date.parse(session.expiresAt) - options.now.getTime());
  return layout(
    presentation,
    boardName,
    { 'embed-state': 'ready', 'expires-in-ms': String(expiresInMs) },
    `<div class="embed" id="embed-root">
<header class="bar">
<h1 class="board-name" data-testid="board-name">${escapeHtml(boardName)}</h1>
<div class="user" data-testid="user"><span class="user-label">${escapeHtml(texts.signedInAs)}</span>${avatar}<span class="user-name" data-testid="user-name" title="${escapeHtml(name)}">${escapeHtml(name)}</span>${plan}</div>
</header>
<main class="board" id="embed-board" data-board-id="${escapeHtml(board.boardId)}" data-testid="board">
<div class="empty" data-testid="board-empty"><h2>${escapeHtml(texts.emptyTitle)}</h2><p>${escapeHtml(texts.emptyBody)}</p></div>
</main>
<p class="meta" data-testid="session-expiry">${escapeHtml(texts.expires)} <time datetime="${escapeHtml(session.expiresAt)}" data-local>${escapeHtml(formatInstant(session.expiresAt))}</time></p>
</div>
<template id="embed-expired">${notice(texts, 'session_expired')}</template>
<script type="application/json" id="embed-context">${jsonIsland(embedContext(view))}</script>`,
  );
}

/**
 * A styled error page shown inside the iframe, in the host's language, naming its `code` for the host
 * (the HTTP status says the rest; the page shows none).
 */
export function renderEmbedError(code: EmbedErrorCode, presentation: Presentation): string {
  const texts = TEXTS[presentation.locale];
  return layout(
    presentation,
    texts.notices[code].sentence,
    { 'embed-state': 'error', 'embed-code': code },
    `<div class="embed notice-page" id="embed-root">
${notice(texts, code)}
</div>`,
  );
}
