import { specSession } from '#lib/domain/session';
import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { FRAME_SCRIPT } from './frame-script';
import { escapeHtml, jsonIsland } from './html';
import {
  type EmbedErrorCode,
  formatInstant,
  type Presentation,
  REFUSAL_CODES,
  type RefusalCode,
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

/** The heading of an error page with this status. */
function errorTitle(texts: Texts, status: number): string {
  const titles = texts.errorTitles;
  return status === 400 || status === 401 || status === 404 || status === 503 ? titles[status] : titles.other;
}

const isRefusal = (code: EmbedErrorCode): code is RefusalCode =>
  (REFUSAL_CODES as readonly string[]).includes(code);

/** The notice an error page shows, and the board page keeps ready for when its session expires. */
function notice(texts: Texts, status: number, code: EmbedErrorCode): string {
  return `<div class="notice" role="alert" data-testid="embed-error" data-code="${code}">
<span class="code">${status}</span>
<h1>${escapeHtml(errorTitle(texts, status))}</h1>
<p>${escapeHtml(texts.errors[code])}</p>${
    isRefusal(code)
      ? `\n<p class="hint" data-testid="embed-hint">${escapeHtml(texts.refusalHints[code])}</p>`
      : ''
  }
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
  const avatar = session.avatarUrl
    ? `<img class="avatar" src="${escapeHtml(session.avatarUrl)}" alt="" width="32" height="32" referrerpolicy="no-referrer">`
    : `<span class="avatar initials" aria-hidden="true">${escapeHtml(initials(name))}</span>`;
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
<p class="meta" data-testid="session-expiry">${escapeHtml(texts.expires)} <time datetime="${escapeHtml(session.expiresAt)}" data-local>${escapeHtml(formatInstant(session.expiresAt, presentation.locale))}</time></p>
</div>
<template id="embed-expired">${notice(texts, 401, 'session_expired')}</template>
<script type="application/json" id="embed-context">${jsonIsland(embedContext(view))}</script>`,
  );
}

/** A styled error page shown inside the iframe, in the host's language, naming its `code` for the host. */
export function renderEmbedError(status: number, code: EmbedErrorCode, presentation: Presentation): string {
  const texts = TEXTS[presentation.locale];
  return layout(
    presentation,
    errorTitle(texts, status),
    { 'embed-state': 'error', 'embed-code': code },
    `<div class="embed notice-page" id="embed-root">
${notice(texts, status, code)}
</div>`,
  );
}
