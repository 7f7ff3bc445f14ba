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

/** Every text the page shows, in one language. */
export interface Texts {
  signedInAs: string;
  expires: string;
  emptyTitle: string;
  emptyBody: string;
  /** Error page headings by HTTP status; `other` for any status without its own. */
  errorTitles: Record<400 | 401 | 404 | 503 | 'other', string>;
  errors: Record<EmbedErrorCode, string>;
  /**
   * What the end user can do about a refused link, in the words of someone inside another product who
   * never saw the API: shown under the message on the page, never in the JSON answer.
   */
  refusalHints: Record<RefusalCode, string>;
}

/** The refusals an end user can meet on a link that was once good, each with a hint on what to do. */
export const REFUSAL_CODES = [
  'invalid_token',
  'session_expired',
  'session_revoked',
  'bound_to_another_browser',
] as const satisfies readonly EmbedErrorCode[];
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/**
 * The page's texts. English is the API's own wording: the error messages equal the domain errors' (a test
 * holds them together), so the page and the JSON answer say the same thing.
 */
export const TEXTS: Readonly<Record<Locale, Texts>> = {
  en: {
    signedInAs: 'Signed in as',
    expires: 'Session expires',
    emptyTitle: 'Nothing to show yet',
    emptyBody: 'The board’s own application shows its content here.',
    errorTitles: {
      400: 'This embed link is incomplete',
      401: 'This board can’t be opened',
      404: 'This board is no longer available',
      503: 'Temporarily unavailable',
      other: 'Something went wrong',
    },
    errors: {
      missing_token: 'The embed link has no token',
      invalid_token: 'This embed link is not valid',
      session_expired: 'This embed session has expired. Ask the site that showed it to reload it.',
      session_revoked: 'This embed session has been revoked',
      bound_to_another_browser: 'This embed link was already opened in another browser',
      board_gone: 'The board of this embed session no longer exists',
      unavailable: 'The service is temporarily unavailable; retry shortly',
      internal: 'An unexpected error occurred',
    },
    refusalHints: {
      invalid_token: 'Ask the site that sent you here to open the board again.',
      session_expired:
        'Your access to this board has ended. Ask the site that sent you here to open it again.',
      session_revoked:
        'Your access to this board was withdrawn. Ask the site that sent you here to open it again.',
      bound_to_another_browser:
        'This link works only in the browser that opened it first. Ask the site that sent you here to open the board again.',
    },
  },
  de: {
    signedInAs: 'Angemeldet als',
    expires: 'Sitzung gültig bis',
    emptyTitle: 'Noch nichts anzuzeigen',
    emptyBody: 'Die Anwendung des Boards zeigt ihre Inhalte hier an.',
    errorTitles: {
      400: 'Dieser Einbettungslink ist unvollständig',
      401: 'Dieses Board kann nicht geöffnet werden',
      404: 'Dieses Board ist nicht mehr verfügbar',
      503: 'Vorübergehend nicht verfügbar',
      other: 'Etwas ist schiefgelaufen',
    },
    errors: {
      missing_token: 'Der Einbettungslink enthält kein Token',
      invalid_token: 'Dieser Einbettungslink ist ungültig',
      session_expired:
        'Diese eingebettete Sitzung ist abgelaufen. Bitten Sie die Website, die sie angezeigt hat, sie neu zu laden.',
      session_revoked: 'Diese eingebettete Sitzung wurde widerrufen',
      bound_to_another_browser: 'Dieser Einbettungslink wurde bereits in einem anderen Browser geöffnet',
      board_gone: 'Das Board dieser eingebetteten Sitzung existiert nicht mehr',
      unavailable: 'Der Dienst ist vorübergehend nicht verfügbar; versuchen Sie es gleich noch einmal',
      internal: 'Ein unerwarteter Fehler ist aufgetreten',
    },
    refusalHints: {
      invalid_token:
        'Bitten Sie die Website, über die Sie hierher gekommen sind, das Board erneut zu öffnen.',
      session_expired:
        'Ihr Zugang zu diesem Board ist abgelaufen. Bitten Sie die Website, über die Sie hierher gekommen sind, es erneut zu öffnen.',
      session_revoked:
        'Ihr Zugang zu diesem Board wurde zurückgezogen. Bitten Sie die Website, über die Sie hierher gekommen sind, es erneut zu öffnen.',
      bound_to_another_browser:
        'Dieser Link funktioniert nur in dem Browser, der ihn zuerst geöffnet hat. Bitten Sie die Website, über die Sie hierher gekommen sind, das Board erneut zu öffnen.',
    },
  },
  fr: {
    signedInAs: 'Connecté en tant que',
    expires: 'Session valable jusqu’au',
    emptyTitle: 'Rien à afficher pour le moment',
    emptyBody: 'L’application du tableau affiche son contenu ici.',
    errorTitles: {
      400: 'Ce lien d’intégration est incomplet',
      401: 'Ce tableau ne peut pas être ouvert',
      404: 'Ce tableau n’est plus disponible',
      503: 'Temporairement indisponible',
      other: 'Une erreur est survenue',
    },
    errors: {
      missing_token: 'Le lien d’intégration ne contient pas de jeton',
      invalid_token: 'Ce lien d’intégration n’est pas valide',
      session_expired: 'Cette session intégrée a expiré. Demandez au site qui l’affichait de la recharger.',
      session_revoked: 'Cette session intégrée a été révoquée',
      bound_to_another_browser: 'Ce lien d’intégration a déjà été ouvert dans un autre navigateur',
      board_gone: 'Le tableau de cette session intégrée n’existe plus',
      unavailable: 'Le service est temporairement indisponible ; réessayez dans un instant',
      internal: 'Une erreur inattendue s’est produite',
    },
    refusalHints: {
      invalid_token: 'Demandez au site qui vous a envoyé ici d’ouvrir à nouveau le tableau.',
      session_expired:
        'Votre accès à ce tableau a pris fin. Demandez au site qui vous a envoyé ici de l’ouvrir à nouveau.',
      session_revoked:
        'Votre accès à ce tableau a été retiré. Demandez au site qui vous a envoyé ici de l’ouvrir à nouveau.',
      bound_to_another_browser:
        'Ce lien ne fonctionne que dans le navigateur qui l’a ouvert en premier. Demandez au site qui vous a envoyé ici d’ouvrir à nouveau le tableau.',
    },
  },
  es: {
    signedInAs: 'Sesión iniciada como',
    expires: 'Sesión válida hasta',
    emptyTitle: 'Nada que mostrar todavía',
    emptyBody: 'La aplicación del tablero muestra su contenido aquí.',
    errorTitles: {
      400: 'Este enlace de inserción está incompleto',
      401: 'No se puede abrir este tablero',
      404: 'Este tablero ya no está disponible',
      503: 'No disponible temporalmente',
      other: 'Algo salió mal',
    },
    errors: {
      missing_token: 'El enlace de inserción no contiene ningún token',
      invalid_token: 'Este enlace de inserción no es válido',
      session_expired:
        'Esta sesión insertada ha caducado. Pida al sitio que la mostraba que vuelva a cargarla.',
      session_revoked: 'Esta sesión insertada ha sido revocada',
      bound_to_another_browser: 'Este enlace de inserción ya se abrió en otro navegador',
      board_gone: 'El tablero de esta sesión insertada ya no existe',
      unavailable: 'El servicio no está disponible temporalmente; vuelva a intentarlo en breve',
      internal: 'Se produjo un error inesperado',
    },
    refusalHints: {
      invalid_token: 'Pida al sitio que le envió aquí que vuelva a abrir el tablero.',
      session_expired:
        'Su acceso a este tablero ha terminado. Pida al sitio que le envió aquí que vuelva a abrirlo.',
      session_revoked:
        'Su acceso a este tablero fue retirado. Pida al sitio que le envió aquí que vuelva a abrirlo.',
      bound_to_another_browser:
        'Este enlace solo funciona en el navegador que lo abrió primero. Pida al sitio que le envió aquí que vuelva a abrir el tablero.',
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

/** Short month names of CLDR's medium date in each language that writes the month as a word. */
const MONTHS = {
  en: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
  fr: ['janv.', 'févr.', 'mars', 'avr.', 'mai', 'juin', 'juil.', 'août', 'sept.', 'oct.', 'nov.', 'déc.'],
  es: ['ene', 'feb', 'mar', 'abr', 'may', 'jun', 'jul', 'ago', 'sept', 'oct', 'nov', 'dic'],
} as const;

const pad2 = (n: number) => String(n).padStart(2, '0');

/**
 * CLDR's medium date and short time of each language, in UTC, written out rather than asked of
 * `Intl.DateTimeFormat`: its first use loads ICU's locale data, 12-17 ms of the embed page's cold start
 * (docs/performance.md). A test holds these to Intl's output for every month and hour.
 */
const DATE_TIME: Readonly<Record<Locale, (date: Date) => string>> = {
  en: (d) => {
    const hour = d.getUTCHours();
    const date = `${MONTHS.en[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
    return `${date}, ${hour % 12 || 12}:${pad2(d.getUTCMinutes())} ${hour < 12 ? 'AM' : 'PM'}`;
  },
  de: (d) =>
    `${pad2(d.getUTCDate())}.${pad2(d.getUTCMonth() + 1)}.${d.getUTCFullYear()}, ` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`,
  fr: (d) =>
    `${d.getUTCDate()} ${MONTHS.fr[d.getUTCMonth()]} ${d.getUTCFullYear()}, ` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`,
  es: (d) =>
    `${d.getUTCDate()} ${MONTHS.es[d.getUTCMonth()]} ${d.getUTCFullYear()}, ` +
    `${d.getUTCHours()}:${pad2(d.getUTCMinutes())}`,
};

/**
 * An instant as the page shows it before its script runs: the date and time in UTC, in the page's
 * language (the script then shows it in the viewer's own time zone).
 */
export function formatInstant(iso: string, locale: Locale): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${DATE_TIME[locale](date)} UTC`;
}
