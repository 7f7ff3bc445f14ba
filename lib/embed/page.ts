import type { EmbedView } from '#lib/use-cases/open-embed-session';
import { escapeHtml, jsonIsland } from './html';
import { EMBED_CSS } from './styles';

/** The public context handed to the board's front end: never the token, never its hash. */
export function embedContext(view: EmbedView) {
  const { session, board } = view;
  return {
    board: { id: board.boardId, name: board.name },
    session: {
      id: session.id,
      boardId: session.boardId,
      userId: session.userId,
      email: session.email,
      firstName: session.firstName,
      lastName: session.lastName,
      avatarUrl: session.avatarUrl,
      plan: session.plan,
      metadata: session.metadata,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
    },
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

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex,nofollow">
<title>${escapeHtml(title)}</title>
<style>${EMBED_CSS}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The embedded board for a usable session. Every user-supplied value is escaped. */
export function renderEmbedPage(view: EmbedView): string {
  const { session, board } = view;
  const name = displayName(session);
  const boardName = board.name?.trim() || board.boardId;
  const avatar = session.avatarUrl
    ? `<img class="avatar" src="${escapeHtml(session.avatarUrl)}" alt="" width="32" height="32" referrerpolicy="no-referrer">`
    : `<span class="avatar initials" aria-hidden="true">${escapeHtml(initials(name))}</span>`;
  const plan = session.plan?.trim()
    ? `<span class="plan" data-testid="plan" title="${escapeHtml(session.plan)}">${escapeHtml(session.plan)}</span>`
    : '';
  const columns = ['To do', 'In progress', 'Done']
    .map(
      (title) =>
        `<section class="column"><h2>${title}</h2><div class="card">Nothing here yet</div></section>`,
    )
    .join('\n');
  return layout(
    boardName,
    `<header class="bar">
<h1 class="board-name" data-testid="board-name">${escapeHtml(boardName)}</h1>
<div class="user" data-testid="user">${avatar}<span class="user-name" data-testid="user-name" title="${escapeHtml(name)}">${escapeHtml(name)}</span>${plan}</div>
</header>
<main data-board-id="${escapeHtml(board.boardId)}">
${columns}
</main>
<script type="application/json" id="embed-context">${jsonIsland(embedContext(view))}</script>`,
  );
}

/** A styled error page shown inside the iframe. */
export function renderEmbedError(status: number, title: string, message: string): string {
  return layout(
    title,
    `<div class="notice" role="alert" data-testid="embed-error">
<span class="code">${status}</span>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
</div>`,
  );
}
