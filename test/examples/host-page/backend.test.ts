import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Listening, listenOnFreePort } from '#test/support/listen';
import type { HostPageConfig } from '../../../examples/host-page/backend';
import { type RunningHostPage, startHostPage } from '../../../examples/host-page/server';

/**
 * The example host page's backend over HTTP, against a stand-in for the service that records what it is
 * asked and answers what a test sets: a session per page view created with the key, the embedUrl
 * rendered safely whatever the service answers, the key never passed on, one plain sentence when there
 * is no session.
 */
const API_KEY = 'esk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const TOKEN_URL = (base: string) => `${base}/embed?token=q8Zc3Jx0bV1yTn4Kd7Wm2Rf9Hs6Lp5Ae`;

interface Asked {
  method: string;
  url: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}
let asked: Asked[];
/** The stand-in service's answer to a create; `undefined`: it never answers. */
let answer: ((base: string) => { status: number; body: unknown }) | undefined;
let service: Listening;
let hostPage: RunningHostPage;
let logged: string[];
let config: HostPageConfig;

async function serviceHandler(req: IncomingMessage, res: ServerResponse) {
  let text = '';
  for await (const chunk of req) text += chunk;
  asked.push({
    method: req.method ?? '',
    url: req.url ?? '',
    authorization: req.headers.authorization,
    body: JSON.parse(text || '{}'),
  });
  if (!answer) return; // never answers
  const { status, body } = answer(service.endpoint);
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

const created = (embedUrl: string) => ({
  status: 201,
  body: { session: { id: 'session-1', status: 'active' }, sessionToken: 'q8Zc3Jx0', embedUrl },
});

beforeAll(async () => {
  service = await listenOnFreePort(createServer((req, res) => void serviceHandler(req, res)));
  config = {
    apiBaseUrl: service.endpoint,
    apiKey: API_KEY,
    boardId: 'roadmap',
    user: { userId: 'customer-42', email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' },
    log: (line) => logged.push(line),
  };
  hostPage = await startHostPage(config, 0);
});
afterAll(async () => {
  await hostPage?.close();
  await service?.close();
});
beforeEach(() => {
  asked = [];
  logged = [];
  answer = (base) => created(TOKEN_URL(base));
});

const page = () => fetch(hostPage.url);
const renew = (headers: Record<string, string> = { 'Sec-Fetch-Site': 'same-origin' }) =>
  fetch(new URL('/embed-url', hostPage.url), { method: 'POST', headers });

describe('GET /: the page with the board', () => {
  it("creates a session for the signed-in user with the API key, and renders the session's embedUrl into the page", async () => {
    const response = await page();
    expect(response.status).toBe(200);
    expect(asked).toEqual([
      {
        method: 'POST',
        url: '/api/embed/sessions',
        authorization: `Bearer ${API_KEY}`,
        body: {
          boardId: 'roadmap',
          userId: 'customer-42',
          email: 'ada@example.com',
          firstName: 'Ada',
          lastName: 'Lovelace',
          expiresInSeconds: 3600,
        },
      },
    ]);
    const html = await response.text();
    expect(html).toContain(`<div id="board" data-embed-url="${TOKEN_URL(service.endpoint)}"></div>`);
    expect(html).toContain(`<script src="${service.endpoint}/embed.js?v=`);
    expect(logged).toEqual(['session session-1 for customer-42 on board roadmap']);
  });

  it('creates a new session on every page view', async () => {
    await page();
    await page();
    expect(asked).toHaveLength(2);
  });

  it('never hands the API key to the browser, nor logs it or the embed URL', async () => {
    const response = await page();
    const everything = [...response.headers.values(), await response.text()].join('\n');
    expect(everything).not.toContain(API_KEY);
    const renewal = await renew();
    expect(await renewal.text()).not.toContain(API_KEY);
    expect(logged.join('\n')).not.toMatch(/esk_|token=/);
  });

  it('is served with its CSP and kept by no cache (it holds an embed URL, a credential)', async () => {
    const response = await page();
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src /);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('renders a hostile embedUrl as the value of its one attribute, adding no markup or script', async () => {
    const hostile = `${service.endpoint}/embed?token=x"><script>alert(1)</script><img src=x onerror=alert(2)>'`;
    answer = () => created(hostile);
    const html = await (await page()).text();
    expect(html).toContain(
      `data-embed-url="${service.endpoint}/embed?token=x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#39;"`,
    );
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html).not.toContain('<img');
  });

  it.each([
    ['a javascript: URL', 'javascript:alert(document.cookie)'],
    ['a data: URL', 'data:text/html,<script>alert(1)</script>'],
    ['no URL at all', 'not a url'],
  ])(
    'refuses to mount %s as the embedUrl: a plain sentence, and the reason in the log',
    async (_what, embedUrl) => {
      answer = () => created(embedUrl);
      const response = await page();
      expect(response.status).toBe(502);
      const html = await response.text();
      expect(html).toContain('The board cannot be shown right now. Reload the page to try again.');
      expect(html).not.toContain(embedUrl.slice(0, 10));
      expect(logged).toEqual([
        'no session for customer-42: the service answered without an http(s) embedUrl',
      ]);
    },
  );

  it('shows one plain sentence when the service refuses the session, and logs its status and message', async () => {
    answer = () => ({ status: 401, body: { message: 'Unauthorized' } });
    const response = await page();
    expect(response.status).toBe(502);
    const html = await response.text();
    expect(html).toContain('<p>The board cannot be shown right now. Reload the page to try again.</p>');
    expect(html).not.toMatch(/401|Unauthorized/);
    expect(logged).toEqual(['no session for customer-42: the service refused the session: 401 Unauthorized']);
  });

  it('gives up on a service that does not answer within its time limit', async () => {
    answer = undefined;
    // A limit of 50 ms, so that no test waits real seconds for it.
    const impatient = await startHostPage({ ...config, timeoutMs: 50 }, 0);
    try {
      const response = await fetch(impatient.url);
      expect(response.status).toBe(502);
      expect(logged).toEqual([expect.stringMatching(/^no session for customer-42: .* cannot be reached/)]);
    } finally {
      await impatient.close();
    }
  });

  it('answers 405 to another method and 404 to another path', async () => {
    expect((await fetch(hostPage.url, { method: 'POST' })).status).toBe(405);
    expect((await fetch(new URL('/admin', hostPage.url))).status).toBe(404);
    expect(asked).toEqual([]);
  });
});

describe('POST /embed-url: the page asks for a new link to renew its session', () => {
  it("answers a new session's embedUrl, kept by no cache", async () => {
    const response = await renew();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ embedUrl: TOKEN_URL(service.endpoint) });
    expect(asked).toHaveLength(1);
  });

  it('answers a browser that sends no Sec-Fetch-Site (an older one) as well', async () => {
    expect((await renew({})).status).toBe(200);
  });

  it.each(['cross-site', 'same-site', 'none'])(
    'refuses a request a page of another origin made (Sec-Fetch-Site: %s), creating no session',
    async (site) => {
      const response = await renew({ 'Sec-Fetch-Site': site });
      expect(response.status).toBe(403);
      expect(asked).toEqual([]);
    },
  );

  it('answers 502 with a plain sentence when the service gives no session, so the page stops there', async () => {
    answer = () => ({ status: 404, body: { message: 'Board not found' } });
    const response = await renew();
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      error: 'The board cannot be shown right now. Reload the page to try again.',
    });
  });

  it('answers 405 to a GET', async () => {
    expect((await fetch(new URL('/embed-url', hostPage.url))).status).toBe(405);
  });
});
