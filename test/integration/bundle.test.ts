import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { builtinModules } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { CreateKeyCommand, GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { build, type Metafile } from 'esbuild';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLING, buildBundle, esbuildOptions, type FunctionBundle, shipFiles } from '#infra/bundling';
import { HOST_SCRIPT, HOST_SCRIPT_VERSION } from '#lib/adapters/http/embed/host-script';
import { AUTHORIZER_FAILED } from '#lib/adapters/http/middlewares/authorizer-errors';
import { FUNCTIONS, type FunctionDefinition, type FunctionName } from '#lib/definitions/routes';
import { TABLE_KEYS, TABLES } from '#lib/definitions/tables';
import { formatWebhookSecret, webhookSecretMessage } from '#lib/domain/webhook';
import { GOALS } from '#test/bench/floor';
import { childEnv } from '#test/support/child-env';
import { embedEvent, jsonEvent, proxyEvent } from '#test/support/events';
import { validBody } from '#test/support/fixtures';
import { runtimeIdTokenKeys } from '#test/support/id-token-keys';
import { createSessionCall } from '#test/support/local-runtime';
import { motoMissing, startMoto } from '#test/support/moto';
import { node24 } from '#test/support/node24';
import { putPublicBoard } from '#test/support/public-board';
import { useTestRuntime } from '#test/support/runtime-fixture';
import { sdkFloorBytes } from '#test/support/sdk-floor';

const run = promisify(execFile);
const INVOKER = join(import.meta.dirname, '../support/invoke-bundle.mjs');

const runtime = useTestRuntime();
let outDir: string;
/** Each function's bundle as the stack writes it: its entry file (index.mjs) first, then its chunks. */
const built = new Map<FunctionName, FunctionBundle>();
const bundles = new Map<FunctionName, string>();
/** What esbuild put into each bundle. */
const metafiles = new Map<FunctionName, Metafile>();

beforeAll(() => {
  outDir = mkdtempSync(join(tmpdir(), 'bundles-'));
  for (const name of Object.keys(FUNCTIONS) as FunctionName[]) {
    const bundle = buildBundle(esbuildOptions(FUNCTIONS[name].entry, join(outDir, name)));
    shipFiles(FUNCTIONS[name] as FunctionDefinition, join(outDir, name));
    built.set(name, bundle);
    metafiles.set(name, bundle.metafile);
    bundles.set(name, bundle.files[0] as string);
  }
});
afterAll(async () => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/**
 * Invokes a bundle in a fresh process of the `node` binary, with Lambda-like environment pointing at the
 * local tables.
 */
async function invoke(
  node: string,
  name: FunctionName,
  event: unknown,
  env: Record<string, string> = {},
): Promise<{ ok: boolean; result?: unknown; message?: string }> {
  return (await invokeWithLogs(node, name, event, env)).outcome;
}

/** As `invoke`, with the JSON log lines the function wrote. */
async function invokeWithLogs(
  node: string,
  name: FunctionName,
  event: unknown,
  extraEnv: Record<string, string> = {},
): Promise<{
  outcome: { ok: boolean; result?: unknown; message?: string };
  logs: Record<string, unknown>[];
}> {
  const env: Record<string, string> = childEnv({
    AWS_REGION: 'local',
    DYNAMODB_ENDPOINT: runtime.dynamoEndpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    LOG_LEVEL: 'error',
  });
  for (const key of TABLE_KEYS) env[TABLES[key].envVar] = runtime.tables[key];
  Object.assign(env, extraEnv);
  const { stdout } = await run(node, [INVOKER, bundles.get(name) as string, JSON.stringify(event)], { env });
  const marker = stdout.lastIndexOf('@@OUTCOME@@');
  const logs = stdout
    .slice(0, marker)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { outcome: JSON.parse(stdout.slice(marker + '@@OUTCOME@@'.length)), logs };
}

const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];

/**
 * The modules in the files Node loads when the function starts, before its handler runs: its entry and
 * the chunks that imports statically (`import()` loads the others when it runs).
 */
function inputsAtStart(name: FunctionName): string[] {
  const { outputs } = metafiles.get(name) as Metafile;
  return (built.get(name)?.atStart.files ?? []).flatMap((file) => {
    const output = outputs[relative(process.cwd(), file).split(sep).join('/')];
    if (!output) throw new Error(`no output ${file} in ${name}'s metafile`);
    return Object.keys(output.inputs);
  });
}

/** The stand-in infra/bundling.ts aliases `specifier` to, as the metafile names it (relative to the root). */
const standIn = (specifier: string): string =>
  relative(process.cwd(), BUNDLING.alias[specifier] as string)
    .split(sep)
    .join('/');

let replaced: Promise<string[]> | undefined;
/**
 * The module files the SDK's own resolution gives each swapped package specifier (esbuild, with the
 * functions' settings and no alias, resolving an import of each): what the aliases keep out.
 */
function replacedModules(): Promise<string[]> {
  replaced ??= Promise.all(
    Object.keys(BUNDLING.alias)
      .filter((specifier) => !specifier.startsWith('node:'))
      .map(async (specifier) => {
        const { metafile } = await build({
          stdin: { contents: `export * from '${specifier}';`, resolveDir: process.cwd() },
          bundle: true,
          write: false,
          platform: 'node',
          format: 'esm',
          mainFields: [...BUNDLING.mainFields],
          metafile: true,
          logLevel: 'silent',
        });
        const edge = Object.values(metafile.inputs)
          .flatMap((input) => input.imports)
          .find((candidate) => candidate.original === specifier);
        if (!edge) throw new Error(`esbuild resolved no module for ${specifier}`);
        return edge.path;
      }),
  );
  return replaced;
}

const DOMAIN = 'abc.execute-api.eu-west-1.amazonaws.com';
/** The application of the board the bundled embed page hands off from. */
const APP_URL = 'https://board.acme.test/embedded';

/** The authorizer context of the demo key owner. */
function demoCaller(): Record<string, string> {
  return {
    userId: runtime.demo?.userId ?? '',
    keyId: runtime.demo?.keyId ?? '',
    principalId: runtime.demo?.userId ?? '',
  };
}

/** A session of the demo key owner, created through the running service; returns its id. */
async function demoSession(userId = 'bundle-user'): Promise<string> {
  const created = await createSessionCall(
    runtime,
    validBody({ boardId: runtime.demo?.publicBoardId, userId }),
  );
  return String((created.body.session as { id: string }).id);
}

/** A proxy integration's answer, as a function returns it to API Gateway. */
type ProxyResult = { statusCode: number; headers: Record<string, string>; body: string };

/** One realistic invocation per function; every function in the route table must have one. */
type Sample = {
  event: unknown;
  /** The status code of a proxy integration's answer; none for the authorizer, which answers a policy. */
  status?: number;
  /** What else the answer must be, beyond its status. */
  check?: (result: ProxyResult) => void;
  /** Settings the function needs beyond the tables (the local key file, say). */
  env?: Record<string, string>;
};
const SAMPLES: Record<FunctionName, () => Sample | Promise<Sample>> = {
  authorizer: () => ({
    event: {
      type: 'TOKEN',
      authorizationToken: `Bearer ${runtime.demo?.apiKey}`,
      methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/POST/api/embed/sessions',
    },
    check: (result) => {
      expect(result).toMatchObject({
        principalId: runtime.demo?.userId,
        policyDocument: {
          Statement: [{ Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/*' }],
        },
      });
    },
  }),
  createSession: () => ({
    event: jsonEvent(validBody({ boardId: runtime.demo?.privateBoardId }), {
      domainName: DOMAIN,
      authorizer: {
        userId: runtime.demo?.userId ?? '',
        keyId: runtime.demo?.keyId ?? '',
        principalId: runtime.demo?.userId ?? '',
      },
    }),
    status: 201,
    check: (result) => {
      // No PUBLIC_BASE_URL here: the URL comes from API Gateway's domain name and stage.
      expect(JSON.parse(result.body).embedUrl).toMatch(
        /^https:\/\/abc\.execute-api\.eu-west-1\.amazonaws\.com\/prod\/embed\?token=[\w-]{32}$/,
      );
    },
  }),
  embedPage: async () => {
    // A session that binds, so the bundle also makes its one conditional update and sets the cookie.
    const created = await createSessionCall(
      runtime,
      validBody({ boardId: runtime.demo?.publicBoardId, bindToBrowser: true }),
    );
    return {
      event: embedEvent({ token: String(created.body.sessionToken) }),
      status: 200,
      check: (result) => {
        expect(result.headers['Content-Type']).toBe('text/html; charset=utf-8');
        expect(result.body).toContain('Product roadmap');
        expect(result.headers['Set-Cookie']).toMatch(/^__Host-embed_binding=[\w-]{43}; Path=\/;/);
      },
    };
  },
  embedScript: () => ({
    event: proxyEvent({
      method: 'GET',
      path: '/embed.js',
      query: { v: HOST_SCRIPT_VERSION },
      authorizer: null,
    }),
    status: 200,
    check: (result) => {
      // Minified or not, the bundle serves exactly the bytes the quickstart's integrity hash pins.
      expect(result.body).toBe(HOST_SCRIPT);
      expect(result.headers['Cache-Control']).toBe('public, max-age=31536000, immutable');
    },
  }),
  listSessions: async () => {
    // A user of its own per run: the bundles run once per Node against the same tables.
    const userId = `bundle-lister-${randomUUID()}`;
    const id = await demoSession(userId);
    return {
      event: proxyEvent({
        method: 'GET',
        query: { userId },
        headers: { Authorization: `Bearer ${runtime.demo?.apiKey}` },
        authorizer: demoCaller(),
      }),
      status: 200,
      check: (result) => {
        expect(JSON.parse(result.body)).toMatchObject({
          data: [{ id, userId }],
          nextCursor: null,
        });
      },
    };
  },
  listEvents: () => ({
    event: proxyEvent({
      method: 'GET',
      path: '/api/embed/events',
      query: { type: 'session.created', limit: '5' },
      headers: { Authorization: `Bearer ${runtime.demo?.apiKey}` },
      authorizer: demoCaller(),
    }),
    status: 200,
    check: (result) => {
      expect(JSON.parse(result.body)).toHaveProperty('data');
    },
  }),
  getSession: async () => {
    const id = await demoSession();
    return {
      event: proxyEvent({
        method: 'GET',
        path: `/api/embed/sessions/${id}`,
        resource: '/api/embed/sessions/{id}',
        pathParameters: { id },
        authorizer: demoCaller(),
      }),
      status: 200,
      check: (result) => {
        expect(JSON.parse(result.body).session).toMatchObject({ id, status: 'active' });
      },
    };
  },
  revokeSession: async () => {
    const id = await demoSession();
    return {
      event: proxyEvent({
        path: `/api/embed/sessions/${id}/revoke`,
        resource: '/api/embed/sessions/{id}/revoke',
        pathParameters: { id },
        body: null,
        authorizer: demoCaller(),
      }),
      status: 200,
      check: (result) => {
        expect(JSON.parse(result.body).session).toMatchObject({ id, status: 'revoked' });
      },
    };
  },
  revokeUserSessions: async () => {
    await demoSession('bundle-revoker');
    return {
      event: jsonEvent(
        { userId: 'bundle-revoker' },
        { path: '/api/embed/sessions/revoke', authorizer: demoCaller() },
      ),
      status: 200,
      check: (result) => {
        expect(JSON.parse(result.body)).toEqual({ revoked: 1 });
      },
    };
  },
  createWebhook: () => ({
    event: jsonEvent(
      { url: 'https://example.com/hooks', events: ['session.revoked'] },
      { path: '/api/embed/webhooks', authorizer: demoCaller() },
    ),
    env: { WEBHOOK_MASTER_KEY_FILE: process.env.WEBHOOK_MASTER_KEY_FILE ?? '' },
    status: 201,
    check: (result) => {
      expect(JSON.parse(result.body)).toMatchObject({
        webhook: { url: 'https://example.com/hooks', events: ['session.revoked'] },
        secret: expect.stringMatching(/^whsec_/),
      });
    },
  }),
  listWebhooks: () => ({
    // The API key signs the page's cursor, as for the session and event listings.
    event: proxyEvent({
      method: 'GET',
      path: '/api/embed/webhooks',
      query: { limit: '5' },
      headers: { Authorization: `Bearer ${runtime.demo?.apiKey}` },
      authorizer: demoCaller(),
    }),
    status: 200,
    check: (result) => {
      expect(JSON.parse(result.body)).toMatchObject({ data: expect.any(Array), nextCursor: null });
      expect(result.body).not.toContain('whsec_');
    },
  }),
  provisioning: () => ({
    event: proxyEvent({
      method: 'GET',
      path: '/admin/orgs/org_demo/members',
      resource: '/admin/orgs/{orgId}/members',
      pathParameters: { orgId: 'org_demo' },
      authorizer: null,
      userArn: 'arn:aws:iam::123456789012:user/ops',
    }),
    status: 200,
    check: (result) => {
      expect(JSON.parse(result.body)).toMatchObject({ orgId: 'org_demo', members: expect.any(Array) });
    },
  }),
  deleteWebhook: () => ({
    event: proxyEvent({
      method: 'DELETE',
      path: '/api/embed/webhooks/whe_00000000000000000000000000000000',
      resource: '/api/embed/webhooks/{id}',
      pathParameters: { id: 'whe_00000000000000000000000000000000' },
      authorizer: demoCaller(),
    }),
    status: 404,
  }),
  // An endpoint the caller does not have: answered before any secret is derived.
  rotateWebhookSecret: () => ({
    event: proxyEvent({
      method: 'POST',
      path: '/api/embed/webhooks/whe_00000000000000000000000000000000/rotate-secret',
      resource: '/api/embed/webhooks/{id}/rotate-secret',
      pathParameters: { id: 'whe_00000000000000000000000000000000' },
      authorizer: demoCaller(),
    }),
    env: { WEBHOOK_MASTER_KEY_FILE: process.env.WEBHOOK_MASTER_KEY_FILE ?? '' },
    status: 404,
  }),
  docs: () => ({
    event: proxyEvent({
      method: 'GET',
      path: '/docs/swagger-ui.css',
      resource: '/docs/{asset}',
      pathParameters: { asset: 'swagger-ui.css' },
      authorizer: null,
    }),
    status: 200,
    check: (result) => {
      // The renderer's stylesheet is read from the file the bundling step shipped next to the bundle.
      expect(result.headers['Content-Type']).toBe('text/css; charset=utf-8');
      expect(result.body.length).toBeGreaterThan(100_000);
    },
  }),
  discovery: () => ({
    event: proxyEvent({
      method: 'GET',
      path: '/.well-known/jwks.json',
      authorizer: null,
      domainName: DOMAIN,
    }),
    env: { ID_TOKEN_KEY_FILE: process.env.ID_TOKEN_KEY_FILE ?? '' },
    status: 200,
    check: (result) => {
      expect(JSON.parse(result.body).keys).toEqual([
        expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' }),
      ]);
    },
  }),
  health: () => ({
    event: proxyEvent({ method: 'GET', path: '/health', authorizer: null }),
    status: 200,
  }),
};

describe('Lambda bundles (built exactly as the CDK stack builds them)', () => {
  it.each(FUNCTION_NAMES)(
    'carries the SDK’s KMS client in %s exactly when its definition calls KMS',
    (name) => {
      // What the bundle holds (an input reached only through code tree-shaken away contributes nothing).
      const inputs = Object.values(metafiles.get(name)?.outputs ?? {}).flatMap((output) =>
        Object.keys(output.inputs),
      );
      const definition: FunctionDefinition = FUNCTIONS[name];
      const callsKms = (definition.kms ?? []).length > 0 || definition.webhookSecrets === true;
      expect(inputs.some((path) => path.includes('node_modules/@aws-sdk/client-kms/'))).toBe(callsKms);
    },
  );

  it.each(FUNCTION_NAMES)(
    'loads neither KMS’s client nor a signing adapter when %s starts: they are in chunks it imports on first use',
    (name) => {
      const signing = /node_modules\/@aws-sdk\/client-kms\/|lib\/adapters\/signing\//;
      expect(inputsAtStart(name).filter((path) => signing.test(path))).toEqual([]);
    },
  );

  it('ships the embed page’s signing adapters and KMS’s client in chunks it imports only when a board has an application', () => {
    const all = Object.values(metafiles.get('embedPage')?.outputs ?? {}).flatMap((output) =>
      Object.keys(output.inputs),
    );
    const atStart = inputsAtStart('embedPage');
    for (const signing of ['lib/adapters/signing/keyring-keys.ts', 'lib/adapters/signing/kms-client.ts']) {
      expect(all).toContain(signing);
      expect(atStart).not.toContain(signing);
    }
    expect(all.some((path) => path.includes('node_modules/@aws-sdk/client-kms/'))).toBe(true);
    // What it loads at start holds the page itself and DynamoDB's client.
    expect(atStart).toContain('functions/embed-page.ts');
    expect(atStart.some((path) => path.includes('node_modules/@aws-sdk/client-dynamodb/'))).toBe(true);
  });

  it('leaves out of the embed page the destination checks it never makes (package.json "sideEffects")', () => {
    // The composition root imports them for the webhook functions; their IP range tables, parsed at
    // module load, would otherwise run in every cold start of a page that sends nothing anywhere.
    const inputs = Object.values(metafiles.get('embedPage')?.outputs ?? {}).flatMap((output) =>
      Object.keys(output.inputs),
    );
    expect(inputs).toContain('functions/wiring.ts');
    expect(inputs).not.toContain('lib/domain/destinations.ts');
  });

  it.each(Object.keys(FUNCTIONS) as FunctionName[])(
    'bundles %s as ESM with no dynamic require of a package, in its entry or any chunk',
    (name) => {
      const code = built
        .get(name)
        ?.files.map((file) => readFileSync(file, 'utf8'))
        .join('\n') as string;
      // esbuild's shim throws "Dynamic require of X is not supported" in ESM; only Node built-ins and
      // the SDK's optional CRT signer (inside a try) may be required through the createRequire banner.
      const required = [...code.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] as string);
      const unexpected = required.filter(
        (id) => !id.startsWith('node:') && !builtinModules.includes(id) && id !== '@aws-sdk/signature-v4-crt',
      );
      expect(unexpected).toEqual([]);
    },
  );

  it.each(FUNCTION_NAMES)(
    'takes the credential provider infra/bundling.ts swaps in from infra/ in %s, never the SDK’s chain',
    async (name) => {
      const inputs = metafiles.get(name)?.inputs ?? {};
      // Every import of the swapped specifier resolved to its stand-in of infra/.
      const resolved = Object.values(inputs).flatMap((input) =>
        input.imports
          .filter((edge) => edge.original !== undefined && edge.original in BUNDLING.alias)
          .map((edge) => ({ specifier: edge.original as string, path: edge.path })),
      );
      expect(resolved.filter(({ specifier, path }) => path !== standIn(specifier))).toEqual([]);
      // The modules the SDK's own resolution would have bundled are not inputs.
      const replaced = await replacedModules();
      expect(Object.keys(inputs).filter((path) => replaced.includes(path))).toEqual([]);
      // A function with an SDK client gets the environment credential provider in place of the chain:
      // should a client stop importing the chain by that name, the swap no longer applies and this fails.
      const signs = Object.keys(inputs).some((path) => path.includes('node_modules/@aws-sdk/client-'));
      expect(resolved.some(({ specifier }) => specifier === '@aws-sdk/credential-provider-node')).toBe(signs);
    },
  );

  it.each(FUNCTION_NAMES)(
    'leaves every other link of the default credential chain, and its STS/SSO clients, out of %s',
    (name) => {
      const inputs = Object.keys(metafiles.get(name)?.inputs ?? {});
      const chain =
        /node_modules\/(@aws-sdk\/(credential-provider-(?!env\/)|nested-clients\/|token-providers\/)|@smithy\/credential-provider-imds\/)/;
      expect(inputs.filter((path) => chain.test(path))).toEqual([]);
    },
  );

  it.each(FUNCTION_NAMES)(
    'keeps %s, entry and chunks, at most the size of its SDK floor (a coarse ceiling)',
    async (name) => {
      const bytes = built.get(name)?.bytes as number;
      expect(built.get(name)?.files.length).toBeGreaterThan(0);
      const floor = await sdkFloorBytes(name, FUNCTIONS[name]);
      expect(
        bytes,
        `${name} is ${bytes} bytes (all its .mjs files), over ${GOALS.bundleRatio}× its SDK floor (${floor} bytes, test/bench/floor.ts): ` +
          "find what grew in esbuild's metafile (a module infra/bundling.ts swaps out coming back, say) and fix it",
      ).toBeLessThanOrEqual(GOALS.bundleRatio * floor);
    },
  );

  it.each(Object.keys(FUNCTIONS) as FunctionName[])(
    'leaves the admin CLI out of %s, and the API Gateway SDK out of every function but those using usage plans',
    (name) => {
      const sources = (built.get(name)?.files ?? []).flatMap(
        (file) => (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources,
      );
      const usesTables = Object.keys(FUNCTIONS[name].access).length > 0;
      expect(sources.some((source) => source.includes('@aws-sdk/client-dynamodb'))).toBe(usesTables);
      expect(sources.filter((source) => /(^|\/)admin\//.test(source))).toEqual([]);
      const keepsUsagePlans = (FUNCTIONS[name] as FunctionDefinition).usagePlans !== undefined;
      expect(sources.some((source) => source.includes('client-api-gateway'))).toBe(keepsUsagePlans);
    },
  );
});

/**
 * The bundles run on the local Node and on Node 24, the version of Lambda's nodejs24.x runtime (CI
 * installs it; elsewhere these tests say why they skip).
 */
const NODE_24 = node24();
const RUNTIMES = [
  { label: `the local Node (${process.version})`, node: process.execPath, missing: undefined },
  { label: 'Node 24, as in Lambda', node: NODE_24.path ?? '', missing: NODE_24.missing },
];

const MOTO_MISSING = motoMissing();
if (MOTO_MISSING) console.warn(`The bundled KMS call is not tested: ${MOTO_MISSING}`);
let hmacKey: ReturnType<typeof startHmacKey> | undefined;
/** moto_server with one HMAC key, started on first use and shared by the runs on each Node. */
const kmsHmacKey = () => {
  hmacKey ??= startHmacKey();
  return hmacKey;
};
afterAll(async () => {
  await (await hmacKey)?.moto.close();
});

async function startHmacKey() {
  const moto = await startMoto();
  const region = 'us-east-1';
  const kms = new KMSClient({
    region,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const created = await kms.send(
    new CreateKeyCommand({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' }),
  );
  const keyArn = String(created.KeyMetadata?.Arn);
  return {
    moto,
    region,
    keyArn,
    endpoint: moto.endpoint,
    secretOf: async (endpointId: string) => {
      const { Mac } = await kms.send(
        new GenerateMacCommand({
          KeyId: keyArn,
          MacAlgorithm: 'HMAC_SHA_256',
          Message: webhookSecretMessage(endpointId, 1),
        }),
      );
      return formatWebhookSecret(Mac as Uint8Array);
    },
  };
}

for (const { label, node, missing } of RUNTIMES) {
  if (missing) console.warn(`Bundle tests on ${label} skipped: ${missing}`);
  describe.skipIf(missing !== undefined)(`Lambda bundles run by ${label}`, () => {
    it('are run by the Node named', () => {
      const version = execFileSync(node, ['--version'], { encoding: 'utf8', env: childEnv() }).trim();
      expect(version).toMatch(node === process.execPath ? process.version : /^v24\./);
    });

    it.each(Object.keys(FUNCTIONS) as FunctionName[])(
      'loads and handles a real event in a fresh Node process: %s',
      async (name) => {
        const sample = await SAMPLES[name]();
        const outcome = await invoke(node, name, sample.event, sample.env);
        expect(outcome.ok, outcome.message).toBe(true);
        if (sample.status !== undefined) expect(outcome.result).toMatchObject({ statusCode: sample.status });
        sample.check?.(outcome.result as ProxyResult);
      },
    );

    it('hands a board’s user to its application from the bundled embed page, its signing chunks loaded on first use', async () => {
      await putPublicBoard(runtime, 'bundle_board_with_app', 'org_demo', {
        name: 'Roadmap app',
        appUrl: APP_URL,
      });
      const created = await createSessionCall(runtime, validBody({ boardId: 'bundle_board_with_app' }));
      const outcome = await invoke(
        node,
        'embedPage',
        embedEvent({ token: String(created.body.sessionToken) }),
        { ID_TOKEN_KEY_FILE: process.env.ID_TOKEN_KEY_FILE ?? '' },
      );
      expect(outcome.ok, outcome.message).toBe(true);
      const result = outcome.result as ProxyResult;
      expect(result.statusCode).toBe(200);
      const idToken = /name="id_token" value="([^"]+)"/.exec(result.body)?.[1] ?? '';
      // Signed in the bundle with the runtime's keyring, by the keys it publishes.
      const { payload } = await jwtVerify(
        idToken,
        createLocalJWKSet({ keys: await runtimeIdTokenKeys(runtime).publicKeys() }),
        { algorithms: ['ES256'], audience: new URL(APP_URL).origin },
      );
      expect(payload).toMatchObject({ sid: (created.body.session as { id: string }).id });
    });

    it.skipIf(MOTO_MISSING !== undefined)(
      'derives a webhook secret with KMS (moto_server) in the bundled create-webhook: KMS’s client loads from its chunk on first use',
      async () => {
        const kms = await kmsHmacKey();
        const sample = SAMPLES.createWebhook() as Sample;
        const outcome = await invoke(node, 'createWebhook', sample.event, {
          AWS_REGION: kms.region,
          WEBHOOK_SECRET_KEY: kms.keyArn,
          // The SDK's own setting for a service's endpoint: the deployed functions ignore it
          // (AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), this run is not given that setting.
          AWS_ENDPOINT_URL_KMS: kms.endpoint,
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
        });
        expect(outcome.ok, outcome.message).toBe(true);
        const result = outcome.result as ProxyResult;
        expect(result.statusCode, result.body).toBe(201);
        const { webhook, secret } = JSON.parse(result.body) as { webhook: { id: string }; secret: string };
        // The secret is the KMS key's MAC of the endpoint: derived by KMS, not by a key file.
        expect(secret).toBe(await kms.secretOf(webhook.id));
      },
    );

    it('logs the stack of an unexpected error with source positions, read from the bundle’s source map', async () => {
      // A route wired without the authorizer is a deployment mistake: a 500, logged with its stack.
      const { outcome, logs } = await invokeWithLogs(
        node,
        'createSession',
        proxyEvent({ authorizer: null, domainName: DOMAIN }),
      );
      expect(outcome.result).toMatchObject({ statusCode: 500 });
      const [line] = logs.filter((entry) => entry.level === 'error');
      expect(line?.stack).toMatch(/lib\/adapters\/http\/api-gateway\.ts:\d+:\d+/);
      // No position left in the bundle's entry or a chunk: each file's own map rewrote it.
      expect(line?.stack).not.toContain(outDir);
    });

    it('fails the bundled authorizer, without blaming the key, when DynamoDB is unreachable', async () => {
      const closed = createServer();
      closed.listen(0, '127.0.0.1');
      await once(closed, 'listening');
      const { port } = closed.address() as AddressInfo;
      closed.close();
      const outcome = await invoke(
        node,
        'authorizer',
        {
          type: 'TOKEN',
          authorizationToken: `Bearer ${runtime.demo?.apiKey}`,
          methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/POST/api/embed/sessions',
        },
        { DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}` },
      );
      expect(outcome).toEqual({ ok: false, message: AUTHORIZER_FAILED });
    });

    it('denies an unknown key from the bundled authorizer with a Deny policy for the stage', async () => {
      const outcome = await invoke(node, 'authorizer', {
        type: 'TOKEN',
        authorizationToken: `Bearer esk_${'B'.repeat(43)}`,
        methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/POST/api/embed/sessions',
      });
      expect(outcome).toEqual({
        ok: true,
        result: {
          principalId: 'invalid-api-key',
          policyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Action: 'execute-api:Invoke',
                Effect: 'Deny',
                Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/*',
              },
            ],
          },
        },
      });
    });

    it('refuses a request without a Bearer key from the bundled authorizer with exactly "Unauthorized"', async () => {
      const outcome = await invoke(node, 'authorizer', {
        type: 'TOKEN',
        authorizationToken: 'Basic dXNlcjpwYXNz',
        methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc/prod/POST/api/embed/sessions',
      });
      expect(outcome).toEqual({ ok: false, message: 'Unauthorized' });
    });
  });
}
