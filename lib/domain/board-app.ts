/**
 * A board's own application: the URL the embed page hands the verified user to (`appUrl`). Pure and in
 * the domain, because the admin use case, the embed page's configuration and the CDK context apply the
 * same rule.
 */

export interface BoardAppUrlRule {
  /**
   * Whether `http://127.0.0.1` and `http://localhost` are accepted: only on the local runtime, where the
   * service itself runs on loopback. Everywhere else the ID token travels over the internet: https only.
   */
  allowLoopbackHttp: boolean;
}

/** True for a loopback http URL (`http://127.0.0.1…`, `http://localhost…`). */
export function isLoopbackHttpUrl(value: string): boolean {
  const url = parseUrl(value);
  return url !== undefined && url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === 'localhost';
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * The problem with `value` as a board application URL, or undefined when it is one: an absolute https URL
 * (http only on loopback where the rule allows it), with a host, without credentials or a fragment, at most
 * 2,048 characters. A path and a query are fine: the token is POSTed to exactly this URL.
 */
export function boardAppUrlProblem(value: string, rule: BoardAppUrlRule): string | undefined {
  const url = parseUrl(value);
  if (!url || url.hostname === '' || value !== value.trim()) return `"${value}" is not an absolute URL`;
  if (value.length > 2048) return 'an app URL is at most 2048 characters';
  const loopback = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopback && rule.allowLoopbackHttp)) {
    return rule.allowLoopbackHttp
      ? `an app URL must use https (or http on 127.0.0.1 or localhost), got "${value}"`
      : `an app URL must use https (it receives a signed ID token), got "${value}"`;
  }
  if (url.username || url.password) return 'an app URL must not contain a user name or password';
  if (value.includes('#')) return 'an app URL must not have a fragment';
  return undefined;
}

/** True when `value` is an application URL under `rule`. */
export function isBoardAppUrl(value: string, rule: BoardAppUrlRule): boolean {
  return boardAppUrlProblem(value, rule) === undefined;
}

/** The origin the ID token is for (its `aud`), and the only target of the page's form. */
export function appOrigin(appUrl: string): string {
  return new URL(appUrl).origin;
}
