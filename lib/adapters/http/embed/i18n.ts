/**
 * How the embed page looks and speaks, as the host asked with `?theme=` and `?locale=`. Both are parsed
 * strictly and mapped to a value of our own; a raw parameter never reaches the page.
 */

export const THEMES = ['light', 'dark', 'auto'] as const;
export type Theme = (typeof THEMES)[number];

/** The languages the page ships; anything else is shown in English. */
export const LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

/** What the page is asked to look like: a theme and a language it has. */
export interface Presentation {
  theme: Theme;
  locale: Locale;
}

export const DEFAULT_PRESENTATION: Presentation = { theme: 'auto', locale: 'en' };

/**
 * The machine-readable reasons an embed page refuses to show the board: the `code` of its `error`
 * message to the host, and the key of its translated text.
 */
export const EMBED_ERROR_CODES = [
  'missing_token',
  'invalid_token',
  'session_expired',
  'session_revoked',
  'bound_to_another_browser',
  'board_gone',
  'unavailable',
  'internal',
] as const;
export type EmbedErrorCode = (typeof EMBED_ERROR_CODES)[number];

/**
 * Every notice a page may show instead of the board: each refusal, and `ended`, the neutral view after a
 * session ended for a reason the page is not told.
 */
export type NoticeCode = EmbedErrorCode | 'ended';

/**
 * What an end user reads instead of the board: one plain sentence saying what happened and one action
 * they can take, in the words of someone inside another product who never saw the API (no status code,
 * no "token", no "embed session"). Inside a frame the one thing a user can do is reload the page around
 * it, which asks the host for a new link.
 */
export interface Notice {
  sentence: string;
  action: string;
}

/** Every text the page shows, in one language. */
export interface Texts {
  signedInAs: string;
  /** Before the instant the user's access ends, on the board page. */
  expires: string;
  emptyTitle: string;
  emptyBody: string;
  notices: Record<NoticeCode, Notice>;
}

/**
 * The page's texts. The pages speak to end users; the JSON answers (`Accept: application/json`) keep the
 * API's own messages, the domain errors', for developers.
 */
export const TEXTS: Readonly<Record<Locale, Texts>> = {
  en: {
    signedInAs: 'Signed in as',
    expires: 'Access until',
    emptyTitle: 'Nothing to show yet',
    emptyBody: 'The board’s own application shows its content here.',
    notices: {
      missing_token: {
        sentence: 'This link to the board is incomplete.',
        action: 'Reload the page to try again.',
      },
      invalid_token: {
        sentence: 'This link to the board is not valid.',
        action: 'Reload the page to try again.',
      },
      session_expired: {
        sentence: 'Your access to this board has ended.',
        action: 'Reload the page to open the board again.',
      },
      session_revoked: {
        sentence: 'Your access to this board was withdrawn.',
        action: 'Reload the page to open the board again.',
      },
      bound_to_another_browser: {
        sentence: 'This link to the board was opened in another browser.',
        action: 'Reload the page to open the board again.',
      },
      board_gone: {
        sentence: 'This board no longer exists.',
        action: 'Contact this site’s support if you need it.',
      },
      unavailable: {
        sentence: 'The board can’t be shown right now.',
        action: 'Reload the page in a moment to try again.',
      },
      internal: {
        sentence: 'Something went wrong while opening the board.',
        action: 'Reload the page to try again.',
      },
      ended: { sentence: 'This board is closed.', action: 'Reload the page to open the board again.' },
    },
  },
  de: {
    signedInAs: 'Angemeldet als',
    expires: 'Zugang bis',
    emptyTitle: 'Noch nichts anzuzeigen',
    emptyBody: 'Die Anwendung des Boards zeigt ihre Inhalte hier an.',
    notices: {
      missing_token: {
        sentence: 'Dieser Link zum Board ist unvollständig.',
        action: 'Laden Sie die Seite neu, um es erneut zu versuchen.',
      },
      invalid_token: {
        sentence: 'Dieser Link zum Board ist ungültig.',
        action: 'Laden Sie die Seite neu, um es erneut zu versuchen.',
      },
      session_expired: {
        sentence: 'Ihr Zugang zu diesem Board ist abgelaufen.',
        action: 'Laden Sie die Seite neu, um das Board wieder zu öffnen.',
      },
      session_revoked: {
        sentence: 'Ihr Zugang zu diesem Board wurde zurückgezogen.',
        action: 'Laden Sie die Seite neu, um das Board wieder zu öffnen.',
      },
      bound_to_another_browser: {
        sentence: 'Dieser Link zum Board wurde in einem anderen Browser geöffnet.',
        action: 'Laden Sie die Seite neu, um das Board wieder zu öffnen.',
      },
      board_gone: {
        sentence: 'Dieses Board gibt es nicht mehr.',
        action: 'Wenden Sie sich an den Support dieser Website, wenn Sie es brauchen.',
      },
      unavailable: {
        sentence: 'Das Board kann gerade nicht angezeigt werden.',
        action: 'Laden Sie die Seite gleich neu, um es erneut zu versuchen.',
      },
      internal: {
        sentence: 'Beim Öffnen des Boards ist etwas schiefgelaufen.',
        action: 'Laden Sie die Seite neu, um es erneut zu versuchen.',
      },
      ended: {
        sentence: 'Dieses Board ist geschlossen.',
        action: 'Laden Sie die Seite neu, um das Board wieder zu öffnen.',
      },
    },
  },
  fr: {
    signedInAs: 'Connecté en tant que',
    expires: 'Accès jusqu’au',
    emptyTitle: 'Rien à afficher pour le moment',
    emptyBody: 'L’application du tableau affiche son contenu ici.',
    notices: {
      missing_token: {
        sentence: 'Ce lien vers le tableau est incomplet.',
        action: 'Rechargez la page pour réessayer.',
      },
      invalid_token: {
        sentence: 'Ce lien vers le tableau n’est pas valide.',
        action: 'Rechargez la page pour réessayer.',
      },
      session_expired: {
        sentence: 'Votre accès à ce tableau a pris fin.',
        action: 'Rechargez la page pour rouvrir le tableau.',
      },
      session_revoked: {
        sentence: 'Votre accès à ce tableau a été retiré.',
        action: 'Rechargez la page pour rouvrir le tableau.',
      },
      bound_to_another_browser: {
        sentence: 'Ce lien vers le tableau a été ouvert dans un autre navigateur.',
        action: 'Rechargez la page pour rouvrir le tableau.',
      },
      board_gone: {
        sentence: 'Ce tableau n’existe plus.',
        action: 'Contactez l’assistance de ce site si vous en avez besoin.',
      },
      unavailable: {
        sentence: 'Le tableau ne peut pas être affiché pour le moment.',
        action: 'Rechargez la page dans un instant pour réessayer.',
      },
      internal: {
        sentence: 'Un problème est survenu à l’ouverture du tableau.',
        action: 'Rechargez la page pour réessayer.',
      },
      ended: { sentence: 'Ce tableau est fermé.', action: 'Rechargez la page pour rouvrir le tableau.' },
    },
  },
  es: {
    signedInAs: 'Sesión iniciada como',
    expires: 'Acceso hasta el',
    emptyTitle: 'Nada que mostrar todavía',
    emptyBody: 'La aplicación del tablero muestra su contenido aquí.',
    notices: {
      missing_token: {
        sentence: 'Este enlace al tablero está incompleto.',
        action: 'Vuelva a cargar la página para intentarlo de nuevo.',
      },
      invalid_token: {
        sentence: 'Este enlace al tablero no es válido.',
        action: 'Vuelva a cargar la página para intentarlo de nuevo.',
      },
      session_expired: {
        sentence: 'Su acceso a este tablero ha terminado.',
        action: 'Vuelva a cargar la página para abrir el tablero de nuevo.',
      },
      session_revoked: {
        sentence: 'Su acceso a este tablero fue retirado.',
        action: 'Vuelva a cargar la página para abrir el tablero de nuevo.',
      },
      bound_to_another_browser: {
        sentence: 'Este enlace al tablero se abrió en otro navegador.',
        action: 'Vuelva a cargar la página para abrir el tablero de nuevo.',
      },
      board_gone: {
        sentence: 'Este tablero ya no existe.',
        action: 'Contacte con el soporte de este sitio si lo necesita.',
      },
      unavailable: {
        sentence: 'El tablero no se puede mostrar ahora.',
        action: 'Vuelva a cargar la página en un momento para intentarlo de nuevo.',
      },
      internal: {
        sentence: 'Algo salió mal al abrir el tablero.',
        action: 'Vuelva a cargar la página para intentarlo de nuevo.',
      },
      ended: {
        sentence: 'Este tablero está cerrado.',
        action: 'Vuelva a cargar la página para abrir el tablero de nuevo.',
      },
    },
  },
};

/** The theme the host asked for, or `auto` for anything that is not exactly one of THEMES. */
export function parseTheme(value: string | undefined): Theme {
  return (THEMES as readonly string[]).includes(value ?? '') ? (value as Theme) : 'auto';
}

/**
 * The shape of a BCP 47 language tag (RFC 5646 `langtag`, or a private-use tag): language with optional
 * extended subtags, script, region, variants, extensions and a private-use part. Shape only: registry
 * validity does not matter, since only the language subtag is used.
 */
const LANGUAGE_TAG =
  /^(?:(?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})(?:-[a-z]{4})?(?:-(?:[a-z]{2}|\d{3}))?(?:-(?:[a-z\d]{5,8}|\d[a-z\d]{3}))*(?:-[a-wyz\d](?:-[a-z\d]{2,8})+)*(?:-x(?:-[a-z\d]{1,8})+)?|x(?:-[a-z\d]{1,8})+)$/i;

/** RFC 5646 asks implementations to handle tags of at least 35 characters; longer ones are refused. */
const MAX_LANGUAGE_TAG_LENGTH = 64;

/** True when `value` has the shape of a BCP 47 language tag. */
export function isLanguageTag(value: string): boolean {
  return value.length <= MAX_LANGUAGE_TAG_LENGTH && LANGUAGE_TAG.test(value);
}

/**
 * The page language for a host's `locale`: its language subtag when the page ships that language
 * (`de-CH` → `de`), otherwise English, as for anything that is not a well-formed tag.
 */
export function parseLocale(value: string | undefined): Locale {
  if (value === undefined || !isLanguageTag(value)) return 'en';
  const language = value.split('-')[0]?.toLowerCase() ?? '';
  return (LOCALES as readonly string[]).includes(language) ? (language as Locale) : 'en';
}

/** The presentation a request asks for with its `theme` and `locale` query parameters. */
export function parsePresentation(
  query: Record<string, string | undefined> | null | undefined,
): Presentation {
  return { theme: parseTheme(query?.theme), locale: parseLocale(query?.locale) };
}

/**
 * An instant as the page shows it before its script runs: ISO 8601's date and minute in UTC, which reads
 * the same in every language. The frame's script then writes it in the viewer's own time zone and the
 * page's language with the browser's `Intl`; a page without scripts keeps this form. The server formats
 * no dates in a language: the first `Intl.DateTimeFormat` of a process loads ICU's data, a fifth of the
 * embed page's cold start, for text the browser replaces at once.
 */
export function formatInstant(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const [day, time] = date.toISOString().split('T') as [string, string];
  return `${day} ${time.slice(0, 5)} UTC`;
}
