/**
 * The board application's pages: the board (a few feature requests with votes), and the page that says
 * why a hand-off or a vote was refused. Four languages, light and dark; plain HTML with one small script
 * that loads the service's `/embed-board.js` so the host page hears `ready`, `resize` and the session's
 * end. After the session ended the service's own view says so (see app.ts), not a page of this one.
 */
import type { Refusal } from './verify';

export type Locale = 'en' | 'de' | 'fr' | 'es';
export type Theme = 'light' | 'dark' | 'auto';
export const LOCALES: readonly Locale[] = ['en', 'de', 'fr', 'es'];

export function parseLocale(value: unknown): Locale {
  return LOCALES.includes(value as Locale) ? (value as Locale) : 'en';
}
export function parseTheme(value: unknown): Theme {
  return value === 'light' || value === 'dark' ? value : 'auto';
}

/** Why this application shows its refused page: a hand-off it refused, or a vote with a stale form. */
export type RefusedReason = Refusal | 'forbidden';

interface Texts {
  signedInAs: string;
  vote: string;
  voted: string;
  votes: (n: number) => string;
  refusedTitle: string;
  refused: Record<RefusedReason, string>;
  reopen: string;
}

const TEXTS: Record<Locale, Texts> = {
  en: {
    signedInAs: 'Signed in as',
    vote: 'Vote',
    voted: 'Voted',
    votes: (n) => `${n} ${n === 1 ? 'vote' : 'votes'}`,
    refusedTitle: 'This board cannot be opened',
    refused: {
      invalid: 'The sign-in link is not valid.',
      expired: 'The sign-in link has expired.',
      replayed: 'The sign-in link was used already.',
      audience: 'The sign-in link is meant for another application.',
      unavailable: 'The sign-in service cannot be reached right now. Try again in a moment.',
      forbidden: 'This vote was not accepted.',
    },
    reopen: 'Open the board again from the page that shows it.',
  },
  de: {
    signedInAs: 'Angemeldet als',
    vote: 'Abstimmen',
    voted: 'Abgestimmt',
    votes: (n) => `${n} ${n === 1 ? 'Stimme' : 'Stimmen'}`,
    refusedTitle: 'Dieses Board kann nicht geöffnet werden',
    refused: {
      invalid: 'Der Anmeldelink ist ungültig.',
      expired: 'Der Anmeldelink ist abgelaufen.',
      replayed: 'Der Anmeldelink wurde bereits verwendet.',
      audience: 'Der Anmeldelink gilt für eine andere Anwendung.',
      unavailable: 'Der Anmeldedienst ist gerade nicht erreichbar. Bitte gleich noch einmal versuchen.',
      forbidden: 'Diese Stimme wurde nicht angenommen.',
    },
    reopen: 'Öffnen Sie das Board erneut über die Seite, die es zeigt.',
  },
  fr: {
    signedInAs: 'Connecté en tant que',
    vote: 'Voter',
    voted: 'Voté',
    votes: (n) => `${n} ${n <= 1 ? 'vote' : 'votes'}`,
    refusedTitle: 'Ce tableau ne peut pas être ouvert',
    refused: {
      invalid: 'Le lien de connexion n’est pas valide.',
      expired: 'Le lien de connexion a expiré.',
      replayed: 'Le lien de connexion a déjà été utilisé.',
      audience: 'Le lien de connexion est destiné à une autre application.',
      unavailable: 'Le service de connexion est injoignable pour le moment. Réessayez dans un instant.',
      forbidden: 'Ce vote n’a pas été accepté.',
    },
    reopen: 'Rouvrez le tableau depuis la page qui l’affiche.',
  },
  es: {
    signedInAs: 'Sesión iniciada como',
    vote: 'Votar',
    voted: 'Votado',
    votes: (n) => `${n} ${n === 1 ? 'voto' : 'votos'}`,
    refusedTitle: 'No se puede abrir este tablero',
    refused: {
      invalid: 'El enlace de acceso no es válido.',
      expired: 'El enlace de acceso ha caducado.',
      replayed: 'El enlace de acceso ya se ha utilizado.',
      audience: 'El enlace de acceso es para otra aplicación.',
      unavailable: 'El servicio de acceso no está disponible ahora. Inténtelo de nuevo en un momento.',
      forbidden: 'Este voto no se ha aceptado.',
    },
    reopen: 'Vuelva a abrir el tablero desde la página que lo muestra.',
  },
};

export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const STYLE = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d2330; --muted: #5b6475; --line: #dfe3ea; --accent: #3655d4; }
[data-theme="dark"] { color-scheme: dark; --bg: #14171f; --fg: #e8ebf2; --muted: #a3abbd; --line: #2c3342; --accent: #8aa2ff; }
[data-theme="light"] { color-scheme: light; }
@media (prefers-color-scheme: dark) { [data-theme="auto"] { --bg: #14171f; --fg: #e8ebf2; --muted: #a3abbd; --line: #2c3342; --accent: #8aa2ff; } }
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, sans-serif; }
main { padding: 16px; }
header { display: flex; align-items: center; justify-content: space-between; gap: 12px; margin-bottom: 12px; }
h1 { font-size: 1.2rem; margin: 0; }
.user { display: flex; align-items: center; gap: 8px; color: var(--muted); }
.user img { width: 32px; height: 32px; border-radius: 50%; }
ul { list-style: none; margin: 0; padding: 0; }
li { display: flex; align-items: center; gap: 12px; padding: 10px 0; border-top: 1px solid var(--line); }
li form { margin: 0; }
li .title { flex: 1; }
li .count { color: var(--muted); min-width: 5em; text-align: right; }
button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid var(--accent); background: none; color: var(--accent); cursor: pointer; }
button[aria-pressed="true"] { background: var(--accent); color: var(--bg); }
.notice { color: var(--muted); }
`;

export interface Post {
  id: string;
  title: Record<Locale, string>;
  /** The users (`userKey`: tenant and subject) who voted for it. */
  voters: Set<string>;
}

export interface BoardView {
  boardName: string;
  boardId: string;
  sid: string;
  userName: string;
  picture: string | null;
  /** The signed-in user's key among the voters (tenant and subject). */
  voter: string;
  posts: Post[];
  csrf: string;
  locale: Locale;
  theme: Theme;
  /** The seconds the session has left, for `/embed-board.js` to end the page on time. */
  expiresIn: number;
  /** This application's URL that `/embed-board.js` watches for an end the server learned first. */
  watch: string;
  /** Where the service serves `/embed-board.js`: the issuer. */
  serviceUrl: string;
  nonce: string;
}

/** The board, drawn for the signed-in user. */
export function boardPage(view: BoardView): string {
  const t = TEXTS[view.locale];
  const avatar = view.picture ? `<img src="${escapeHtml(view.picture)}" alt="">` : '';
  const posts = view.posts
    .map((post) => {
      const voted = post.voters.has(view.voter);
      return `<li data-post="${escapeHtml(post.id)}"><span class="title">${escapeHtml(post.title[view.locale])}</span>
<span class="count">${escapeHtml(t.votes(post.voters.size))}</span>
<form method="post" action="/vote"><input type="hidden" name="post" value="${escapeHtml(post.id)}"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><button type="submit" aria-pressed="${voted}">${escapeHtml(voted ? t.voted : t.vote)}</button></form></li>`;
    })
    .join('\n');
  return layout(
    view,
    view.boardName,
    `<main id="board" data-board-id="${escapeHtml(view.boardId)}">
<header><h1>${escapeHtml(view.boardName)}</h1>
<div class="user">${avatar}<span>${escapeHtml(t.signedInAs)} <strong id="user-name">${escapeHtml(view.userName)}</strong></span></div></header>
<ul>
${posts}
</ul>
</main>
<script src="${escapeHtml(view.serviceUrl)}/embed-board.js"></script>
<script nonce="${view.nonce}">EmbedBoard.ready(${scriptJson({
      sessionId: view.sid,
      boardId: view.boardId,
      expiresIn: view.expiresIn,
      locale: view.locale,
      theme: view.theme,
      watch: view.watch,
    })});</script>`,
  );
}

/**
 * What the host page hears of a refused hand-off: the code the service's embed page gives a link it
 * refuses (docs/embedding.md, error codes), so the host handles both kinds of board alike. A refused vote
 * happens on a board already shown, and says nothing.
 */
const HOST_CODES: Readonly<Record<RefusedReason, string | null>> = {
  invalid: 'invalid_token',
  expired: 'invalid_token',
  replayed: 'invalid_token',
  audience: 'invalid_token',
  unavailable: 'unavailable',
  forbidden: null,
};

/** Why the board is not shown, in the user's language; the host page hears it through `/embed-board.js`. */
export function refusedPage(
  reason: RefusedReason,
  options: { locale: Locale; theme: Theme; nonce: string; serviceUrl: string },
): string {
  const t = TEXTS[options.locale];
  const code = HOST_CODES[reason];
  const tell = code
    ? `
<script src="${escapeHtml(options.serviceUrl)}/embed-board.js"></script>
<script nonce="${options.nonce}">if (window.EmbedBoard) EmbedBoard.error(${scriptJson(code)});</script>`
    : '';
  return layout(
    options,
    t.refusedTitle,
    `<main id="refused" data-reason="${reason}">
<h1>${escapeHtml(t.refusedTitle)}</h1>
<p>${escapeHtml(t.refused[reason])}</p>
<p class="notice">${escapeHtml(t.reopen)}</p>
</main>${tell}`,
  );
}

function layout(
  options: { locale: Locale; theme: Theme; nonce: string },
  title: string,
  body: string,
): string {
  return `<!doctype html>
<html lang="${options.locale}" data-theme="${options.theme}">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title>
<style nonce="${options.nonce}">${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** JSON safe inside a script element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c');
}

/** The demo posts each board starts with; votes are kept in memory. */
export function demoPosts(): Post[] {
  const post = (id: string, title: Record<Locale, string>): Post => ({ id, title, voters: new Set() });
  return [
    post('dark-mode', {
      en: 'Dark mode for the mobile app',
      de: 'Dunkler Modus für die mobile App',
      fr: 'Mode sombre pour l’application mobile',
      es: 'Modo oscuro para la aplicación móvil',
    }),
    post('csv-export', {
      en: 'Export reports as CSV',
      de: 'Berichte als CSV exportieren',
      fr: 'Exporter les rapports en CSV',
      es: 'Exportar informes en CSV',
    }),
    post('sso', {
      en: 'Single sign-on with SAML',
      de: 'Single Sign-on mit SAML',
      fr: 'Authentification unique avec SAML',
      es: 'Inicio de sesión único con SAML',
    }),
  ];
}
