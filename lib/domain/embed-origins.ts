/**
 * Who may frame the embed page: the rules for CSP `frame-ancestors` sources and for the origins a stage
 * or a board lists. Pure and in the domain, because the board rule is applied by the admin use case,
 * the stage rule by the functions' configuration and the CDK context, and all must agree.
 */

const FRAME_SOURCE =
  /^(?:https?:|'self'|'none'|https?:\/\/(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?:\d{1,5}|\*))?)$/i;

/** True for a CSP source the embed page accepts in `frame-ancestors`. */
export function isFrameAncestorSource(source: string): boolean {
  return FRAME_SOURCE.test(source);
}

/**
 * True for an origin that may be listed as allowed to frame the embed page: exactly an origin (no path,
 * no trailing slash), https, or http on localhost / 127.0.0.1 for development, optionally with a
 * wildcard subdomain (`https://*.acme.com`), and a valid `frame-ancestors` source.
 */
export function isEmbedOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const local = url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1');
  return (url.protocol === 'https:' || local) && url.origin === value && isFrameAncestorSource(value);
}

/**
 * The origins of a comma-separated list (`https://a.example.com,https://*.example.com`), blanks around
 * and empty entries dropped; an empty or blank list is no origin at all.
 */
export function splitOriginList(text: string): string[] {
  return text
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}
