/**
 * Rules for setting values that both the functions' environment (lib/platform/config.ts) and the CDK
 * context (infra/config.ts) apply, so a value synthesis accepts never fails a function at start-up.
 * Pure: the functions are bundled from lib/, so nothing here may import from infra/ or aws-cdk-lib.
 */

/** True for a CSP source the embed page accepts in `frame-ancestors` (the rule lives with the board's). */
export { isFrameAncestorSource } from '#lib/domain/embed-origins';

/** The problem of a setting that must be an integer from `min` to `max`, or undefined when it is one. */
export function integerRangeProblem(
  name: string,
  value: number,
  min: number,
  max: number,
  given: string,
): string | undefined {
  if (Number.isInteger(value) && value >= min && value <= max) return undefined;
  return `${name} must be an integer from ${min} to ${max}, got "${given}"`;
}

/** The URL `value` denotes, or undefined when it is not an absolute URL. */
export function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** True for an absolute http(s) URL with a host. */
export function isHttpUrl(value: string): boolean {
  const url = parseUrl(value);
  return url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/**
 * A base URL that links are built on: absolute http(s), without query, fragment or credentials, returned
 * without its trailing slashes. Reports each problem under `name`; undefined when it is no http(s) URL.
 */
export function parseBaseUrl(name: string, value: string, problems: string[]): string | undefined {
  if (!isHttpUrl(value)) {
    problems.push(`${name} must be an absolute http(s) URL, got "${value}"`);
    return undefined;
  }
  // `url.search` is empty for a bare trailing "?", so look at the text itself.
  if (value.includes('?') || value.includes('#')) problems.push(`${name} must not have a query or fragment`);
  const url = new URL(value);
  // Every embed URL starts with it, so credentials in it would be handed to every embedding site.
  if (url.username || url.password) problems.push(`${name} must not contain a user name or password`);
  return value.replace(/\/+$/, '');
}
