/**
 * `npm run smoke -- --base-url URL --api-key KEY --board BOARD`: proves a deployed stage works end to end,
 * the first thing to run after `cdk deploy`. It creates a session, opens its link, checks the OpenID
 * Connect discovery document and the JWKS, revokes the session and checks that its link is refused,
 * printing one line per step, and exits 0 only when every step passed. It leaves nothing behind but one
 * revoked session of five minutes.
 */
import { parseArgs } from 'node:util';

export interface SmokeOptions {
  /** The API's base URL: the stage's `ApiUrl` output, or the custom domain. */
  baseUrl: string;
  apiKey: string;
  /** A board the key may create sessions on. */
  boardId: string;
  /** The external user id the session is for. */
  userId?: string;
  fetch?: typeof fetch;
}

export interface SmokeStep {
  name: string;
  ok: boolean;
  detail: string;
}

/** How long one request may take before the step fails. */
const STEP_TIMEOUT_MS = 10_000;

/** Runs the steps in order, each after the one before passed; answers every step, run or not. */
export async function smoke(options: SmokeOptions, print: (line: string) => void): Promise<SmokeStep[]> {
  const send = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${options.apiKey}` };
  const request = async (url: string, init: RequestInit = {}) => {
    const started = performance.now();
    const response = await send(url, { ...init, signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: the step says what it expected.
    }
    return { status: response.status, body, ms: Math.round(performance.now() - started) };
  };

  let sessionId = '';
  let embedUrl = '';
  const steps: Array<[string, () => Promise<string>]> = [
    [
      'create a session',
      async () => {
        const created = await request(`${base}/api/embed/sessions`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            boardId: options.boardId,
            userId: options.userId ?? 'smoke-test',
            email: 'smoke-test@example.com',
            expiresInSeconds: 300,
          }),
        });
        expectStatus(created, 201);
        sessionId = String((created.body.session as { id?: string } | undefined)?.id ?? '');
        embedUrl = String(created.body.embedUrl ?? '');
        if (!sessionId || !embedUrl) throw new Error('the answer holds no session id or embedUrl');
        return `201 in ${created.ms} ms`;
      },
    ],
    [
      'open its link',
      async () => {
        const page = await request(embedUrl, { headers: { Accept: 'application/json' } });
        expectStatus(page, 200);
        return `200 in ${page.ms} ms`;
      },
    ],
    [
      'read the discovery document',
      async () => {
        const discovery = await request(`${base}/.well-known/openid-configuration`);
        expectStatus(discovery, 200);
        if (typeof discovery.body.jwks_uri !== 'string') throw new Error('it names no jwks_uri');
        return `200, issuer ${String(discovery.body.issuer)}`;
      },
    ],
    [
      'read the signing keys (JWKS)',
      async () => {
        const jwks = await request(`${base}/.well-known/jwks.json`);
        expectStatus(jwks, 200);
        const keys = Array.isArray(jwks.body.keys) ? jwks.body.keys.length : 0;
        if (keys === 0) throw new Error('it lists no key');
        return `200, ${keys} key${keys === 1 ? '' : 's'}`;
      },
    ],
    [
      'revoke the session',
      async () => {
        const revoked = await request(`${base}/api/embed/sessions/${sessionId}/revoke`, {
          method: 'POST',
          headers: auth,
        });
        expectStatus(revoked, 200);
        return `200 in ${revoked.ms} ms`;
      },
    ],
    [
      'see its link refused',
      async () => {
        const refused = await request(embedUrl, { headers: { Accept: 'application/json' } });
        expectStatus(refused, 401);
        return '401, as a revoked link must';
      },
    ],
  ];

  const results: SmokeStep[] = [];
  let failed = false;
  for (const [name, run] of steps) {
    let step: SmokeStep;
    if (failed) step = { name, ok: false, detail: 'not run: an earlier step failed' };
    else {
      try {
        step = { name, ok: true, detail: await run() };
      } catch (error) {
        failed = true;
        step = { name, ok: false, detail: reasonOf(error) };
      }
    }
    results.push(step);
    print(`${step.ok ? 'ok  ' : 'FAIL'} ${step.name}: ${step.detail}`);
  }
  return results;
}

function expectStatus(answer: { status: number; body: Record<string, unknown> }, expected: number): void {
  if (answer.status === expected) return;
  const message = typeof answer.body.message === 'string' ? `: ${answer.body.message}` : '';
  throw new Error(`expected ${expected}, got ${answer.status}${message}`);
}

function reasonOf(error: unknown): string {
  // fetch says only "fetch failed"; its cause says why (ECONNREFUSED, ENOTFOUND, a refused port).
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause) return `cannot reach the service (${cause.code ?? cause.message})`;
  if ((error as Error).name === 'TimeoutError') return `no answer within ${STEP_TIMEOUT_MS / 1000} s`;
  return (error as Error).message;
}

const USAGE =
  'Usage: npm run --silent smoke -- --base-url <URL> --api-key <esk_…> --board <boardId> [--user <userId>]';

/** The command line: exit 0 when every step passed, 1 when one failed, 2 for a usage mistake. */
export async function main(argv: string[], io: { out(line: string): void; err(line: string): void }) {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        board: { type: 'string' },
        user: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (error) {
    io.err(`error: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const missing = ['base-url', 'api-key', 'board'].filter((name) => !values[name]);
  if (missing.length > 0) {
    io.err(`error: missing ${missing.map((name) => `--${name}`).join(', ')}\n${USAGE}`);
    return 2;
  }
  const steps = await smoke(
    {
      baseUrl: String(values['base-url']),
      apiKey: String(values['api-key']),
      boardId: String(values.board),
      ...(values.user ? { userId: values.user } : {}),
    },
    io.out,
  );
  return steps.every((step) => step.ok) ? 0 : 1;
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'));
if (isMain) {
  process.exitCode = await main(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}
