import type { APIGatewayProxyResult } from 'aws-lambda';

/**
 * The API reference page: the renderer's stylesheet and script and the page's own script, all from this
 * origin. Its CSP allows exactly that: scripts and styles from 'self', the document fetched from 'self',
 * the renderer's inline SVG icons as data: images, and nothing may frame it.
 */
export const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Embed Session API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/reference.js"></script>
</body>
</html>
`;

export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** How long browsers and proxies may keep the page, the document and the assets (none is a credential). */
export const PAGE_MAX_AGE_SECONDS = 300;
export const ASSET_MAX_AGE_SECONDS = 86_400;

/** A public, cacheable response with a strong validator; 304 when the client already has it. */
export function cacheableResponse(
  ifNoneMatch: string | undefined,
  asset: { contentType: string; body: string; etag: string },
  maxAgeSeconds: number,
  headers: Record<string, string> = {},
): APIGatewayProxyResult {
  const common = {
    'Cache-Control': `public, max-age=${maxAgeSeconds}`,
    ETag: asset.etag,
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  };
  if (ifNoneMatch === asset.etag) return { statusCode: 304, headers: common, body: '' };
  return { statusCode: 200, headers: { ...common, 'Content-Type': asset.contentType }, body: asset.body };
}
