import type { APIGatewayProxyResult } from 'aws-lambda';
import { headerValue } from '#lib/adapters/http/response';

/** The guides that come with the service, by their path in its repository. */
export const GUIDES: ReadonlyArray<{ title: string; path: string }> = [
  { title: 'Overview', path: 'README.md' },
  { title: 'Quickstart: a board in your product in five minutes', path: 'docs/quickstart.md' },
  { title: 'API reference and decisions', path: 'docs/api.md' },
  { title: 'Embedding the board', path: 'docs/embedding.md' },
  { title: 'Operations', path: 'docs/operations.md' },
  { title: 'Architecture', path: 'docs/architecture.md' },
  { title: 'Performance', path: 'docs/performance.md' },
];

/**
 * What `GET /` answers: where to go next. Links are relative to the API's base URL (the stage's root on
 * AWS, the runtime's origin locally), so the same answer holds behind any domain or stage.
 */
export const SERVICE_INDEX = {
  service: 'Embed session service',
  links: {
    reference: { href: 'docs', title: 'API reference (rendered)' },
    openapi: { href: 'openapi.json', title: 'OpenAPI 3.1 document' },
    health: { href: 'health', title: 'Liveness check' },
    createSession: { href: 'api/embed/sessions', title: 'POST with your API key to create a session' },
  },
  guides: GUIDES,
} as const;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${SERVICE_INDEX.service}</title>
<link rel="icon" href="data:,">
</head>
<body>
<h1>${SERVICE_INDEX.service}</h1>
<ul>
<li><a href="${SERVICE_INDEX.links.reference.href}">${SERVICE_INDEX.links.reference.title}</a></li>
<li><a href="${SERVICE_INDEX.links.openapi.href}">${SERVICE_INDEX.links.openapi.title}</a></li>
<li><a href="${SERVICE_INDEX.links.health.href}">${SERVICE_INDEX.links.health.title}</a></li>
</ul>
<p>Create a session: <code>POST ${SERVICE_INDEX.links.createSession.href}</code> with <code>Authorization: Bearer &lt;key&gt;</code>.</p>
<h2>Guides (in the service's repository)</h2>
<ul>
${GUIDES.map((guide) => `<li>${escapeHtml(guide.title)}: <code>${escapeHtml(guide.path)}</code></li>`).join('\n')}
</ul>
</body>
</html>
`;

/** No script, no style, no framing: the page is links and text. */
const INDEX_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * `GET /`: HTML for a browser (an `Accept` naming text/html), JSON for anything else. Cacheable briefly,
 * varying on `Accept`; it carries no credential.
 */
export function serviceIndexResponse(
  headers: Record<string, string | undefined> | null,
): APIGatewayProxyResult {
  const accept = headerValue(headers, 'accept') ?? '';
  const html = /\btext\/html\b/i.test(accept);
  return {
    statusCode: 200,
    headers: {
      'Content-Type': html ? 'text/html; charset=utf-8' : 'application/json',
      'Cache-Control': 'public, max-age=300',
      Vary: 'Accept',
      'X-Content-Type-Options': 'nosniff',
      ...(html ? { 'Content-Security-Policy': INDEX_CSP, 'Referrer-Policy': 'no-referrer' } : {}),
    },
    body: html ? INDEX_HTML : JSON.stringify(SERVICE_INDEX),
  };
}
