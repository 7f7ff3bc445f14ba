import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, esbuildOptions, LAMBDA_SDK_ENVIRONMENT } from '#infra/bundling';
import { MISSING_CREDENTIALS_MESSAGE } from '#infra/lambda-credentials';
import { FUNCTIONS } from '#lib/definitions/routes';
import { proxyEvent } from '#test/support/events';
import { node24 } from '#test/support/node24';

/** Node 24, as Lambda runs it (test/support/node24.ts), or why there is none here. */
const { path: NODE24, missing: NODE24_SKIP_REASON = '' } = node24();

/**
 * The Lambda bundles replace the SDK's default credential provider chain with one that reads the
 * environment (infra/bundling.ts). Proof that nothing changes for a request: a bundled function signs
 * the same DynamoDB request, at the same time, with the same credentials, exactly as the full SDK does
 * (the same bundle with the SDK's own modules, and the SDK's own signer run from source); and without
 * credentials it fails at once, saying why. The bundle's other replacement (endpoint discovery) is
 * covered too: the requests must be identical.
 */
const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const INVOKER = join(import.meta.dirname, '../support/invoke-bundle.mjs');
const CAPTURE = join(import.meta.dirname, '../support/capture-signed-requests.mjs');
const CAPTURE_MARKER = '@@SIGNED@@';
const CONFIG_READS_MARKER = '@@CONFIG_READS@@';
/** The frozen clock of the capture (its default CAPTURE_TIME). */
const CAPTURE_TIME = '2026-03-01T12:00:00.000Z';
const SOURCE = join(ROOT, FUNCTIONS.getSession.entry);

const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'ASIASIGNINGTESTEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'signing-test-secret-access-key',
  AWS_SESSION_TOKEN: 'signing-test-session-token',
};
const SESSION_ID = '3f2c1e0a-0000-4000-8000-000000000001';
/** GET /api/embed/sessions/{id}: one consistent GetItem, which the capture answers with no item. */
const EVENT = proxyEvent({
  method: 'GET',
  path: `/api/embed/sessions/${SESSION_ID}`,
  resource: '/api/embed/sessions/{id}',
  pathParameters: { id: SESSION_ID },
});

interface SignedRequest {
  hostname: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

interface Run {
  outcome: { ok: boolean; result?: { statusCode?: number }; message?: string };
  requests: SignedRequest[];
  /** Files opened under a `.aws` directory (the SDK's shared config and credentials files). */
  configReads: string[];
  logs: Record<string, unknown>[];
  ms: number;
}

let dir: string;
/** The function as the stack ships it. */
let bundle: string;
/** The same bundle with the SDK's own modules (no `alias`): what every bundle was before. */
let fullChainBundle: string;
let home: string;
/** The inputs esbuild put into each of the two bundles. */
let shippedInputs: string[];
let fullChainInputs: string[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'lambda-credentials-'));
  // No ~/.aws here: a profile must not be where either side finds its credentials.
  home = join(dir, 'home');
  mkdirSync(home);
  const shipped = buildBundle(esbuildOptions(SOURCE, join(dir, 'shipped')));
  bundle = shipped.files[0] as string;
  shippedInputs = Object.keys(shipped.metafile.inputs);
  const fullChain = buildBundle({ ...esbuildOptions(SOURCE, join(dir, 'full-chain')), alias: {} });
  fullChainBundle = fullChain.files[0] as string;
  fullChainInputs = Object.keys(fullChain.metafile.inputs);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `module`'s handler once in a fresh process under `node` with the capture preloaded, in the
 * environment the stack gives a function (its SDK settings included, unless `sdkSettings` is false).
 */
async function invoke(
  node: string,
  module: string,
  credentials: Partial<typeof CREDENTIALS>,
  preload: string[] = [],
  { sdkSettings = true }: { sdkSettings?: boolean } = {},
): Promise<Run> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    AWS_REGION: 'eu-west-1',
    SESSIONS_TABLE: 'signing-sessions',
    MEMBERSHIPS_TABLE: 'signing-memberships',
    LOG_LEVEL: 'error',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...(sdkSettings ? LAMBDA_SDK_ENVIRONMENT : {}),
    ...credentials,
  };
  const start = performance.now();
  // A hang fails the test through this timeout rather than stalling the suite.
  const { stdout } = await run(
    node,
    [...preload, '--import', CAPTURE, INVOKER, module, JSON.stringify(EVENT)],
    { env, cwd: ROOT, timeout: 30_000 },
  );
  const ms = performance.now() - start;
  const outcomeAt = stdout.lastIndexOf('@@OUTCOME@@');
  const capturedAt = stdout.lastIndexOf(CAPTURE_MARKER);
  const configReadsAt = stdout.lastIndexOf(CONFIG_READS_MARKER);
  return {
    configReads: JSON.parse(stdout.slice(configReadsAt + CONFIG_READS_MARKER.length).split('\n')[0] ?? '[]'),
    outcome: JSON.parse(stdout.slice(outcomeAt + '@@OUTCOME@@'.length).split('\n')[0] ?? 'null'),
    requests: JSON.parse(stdout.slice(capturedAt + CAPTURE_MARKER.length).split('\n')[0] ?? '[]'),
    logs: stdout
      .slice(0, outcomeAt)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>),
    ms,
  };
}

/** The signature and what it covers: the headers SigV4 signs with, and the body. */
function signed(request: SignedRequest | undefined) {
  const headers = request?.headers ?? {};
  return {
    authorization: headers.authorization,
    date: headers['x-amz-date'],
    token: headers['x-amz-security-token'],
    target: headers['x-amz-target'],
    host: request?.hostname,
    body: request?.body,
  };
}

type Bytes = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (data: Bytes): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** SHA-256 and HMAC-SHA256 as the SDK's signer takes them (a hash constructor, with a key for HMAC). */
class Sha256 {
  private readonly hash;
  constructor(secret?: Bytes) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: Bytes): void {
    this.hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/**
 * The Authorization the SDK's SigV4 signer (from node_modules, unbundled) computes for exactly this
 * request, at the frozen time, with the environment's credentials.
 */
async function signedBySdk(request: SignedRequest | undefined): Promise<string | undefined> {
  if (!request) return undefined;
  const signer = new SignatureV4({
    service: 'dynamodb',
    region: 'eu-west-1',
    credentials: {
      accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
      sessionToken: CREDENTIALS.AWS_SESSION_TOKEN,
    },
    sha256: Sha256,
  });
  const { authorization: _, ...headers } = request.headers;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'https:',
      hostname: headers.host ?? '',
      path: request.path,
      query: {},
      headers,
      body: request.body,
    },
    { signingDate: new Date(CAPTURE_TIME) },
  );
  return signed.headers.authorization;
}

let referenceRun: Promise<Run> | undefined;
/** The same function from source on the full SDK (default provider chain), run once. */
function reference(): Promise<Run> {
  referenceRun ??= invoke(process.execPath, SOURCE, CREDENTIALS, ['--import', 'tsx']);
  return referenceRun;
}

describe('the full SDK, from source (reference)', () => {
  it('signs one GetItem with the environment credentials', async () => {
    const run = await reference();
    expect(run.outcome.result?.statusCode).toBe(404);
    expect(run.requests).toHaveLength(1);
    const request = signed(run.requests[0]);
    expect(request.target).toBe('DynamoDB_20120810.GetItem');
    expect(request.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=ASIASIGNINGTESTEXAMPLE\/20260301\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/,
    );
    expect(request.date).toBe('20260301T120000Z');
    expect(request.token).toBe(CREDENTIALS.AWS_SESSION_TOKEN);
    // The check below applies to the bundles: it must reproduce the SDK's own signature here first.
    expect(request.authorization).toBe(await signedBySdk(run.requests[0]));
  });
});

describe('what the bundle carries', () => {
  /** Packages of the default chain's other links, and the clients they need. */
  const CHAIN_LINKS = [
    '@aws-sdk/credential-provider-node',
    '@aws-sdk/credential-provider-sso',
    '@aws-sdk/credential-provider-ini',
    '@aws-sdk/credential-provider-process',
    '@aws-sdk/credential-provider-web-identity',
    '@aws-sdk/credential-provider-http',
    '@smithy/credential-provider-imds',
  ];
  const packagesIn = (inputs: string[]) =>
    CHAIN_LINKS.filter((name) => inputs.some((path) => path.includes(`node_modules/${name}/`)));

  it('carries no link of the default credential chain, where the same bundle without the swap carries them all', () => {
    expect(packagesIn(fullChainInputs)).toEqual(CHAIN_LINKS);
    expect(packagesIn(shippedInputs)).toEqual([]);
    expect(shippedInputs).toContain('infra/lambda-credentials.ts');
    expect(
      shippedInputs.filter((path) => path.includes('node_modules/@aws-sdk/credential-provider-env/')),
    ).not.toEqual([]);
  });
});

const NODES: [string, string | undefined][] = [
  [`Node ${process.versions.node}`, process.execPath],
  ['Node 24', NODE24],
];

describe.each(NODES)('a bundled function on %s', (_label, node) => {
  if (!node) {
    it.skip(`runs under Node 24 (${NODE24_SKIP_REASON})`, () => {});
    return;
  }

  it('signs exactly as the same bundle with the SDK modules it replaces: same Authorization, date and token', async () => {
    const [shipped, fullChain] = await Promise.all([
      invoke(node, bundle, CREDENTIALS),
      invoke(node, fullChainBundle, CREDENTIALS),
    ]);
    expect(shipped.outcome.result?.statusCode).toBe(404);
    expect(shipped.requests).toHaveLength(1);
    expect(fullChain.requests).toHaveLength(1);
    expect(shipped.requests[0]).toEqual(fullChain.requests[0]);
    expect(signed(shipped.requests[0])).toEqual(signed(fullChain.requests[0]));
  });

  it('signs the request as the full, unbundled SDK does for the same request, time and credentials', async () => {
    const shipped = await invoke(node, bundle, CREDENTIALS);
    const full = await reference();
    const [ours, theirs] = [shipped.requests[0], full.requests[0]];
    expect(ours?.headers.authorization).toBe(await signedBySdk(ours));
    // Everything the signature covers is the same, but for one header: the SDK's CommonJS build (which
    // Node loads from source) names its version one release behind its package.json, which the ES
    // module build (which esbuild bundles) reads. Same time, same credentials, same signed headers.
    const [oursParts, theirsParts] = [ours, theirs].map((request) => {
      const {
        'x-amz-user-agent': _sdk,
        'user-agent': _node,
        authorization,
        ...rest
      } = request?.headers ?? {};
      return { rest, scope: authorization?.replace(/, Signature=.*$/, '') };
    });
    expect(oursParts?.rest).toEqual(theirsParts?.rest);
    expect(ours?.body).toBe(theirs?.body);
    expect(oursParts?.scope).toBe(theirsParts?.scope);
  });

  it('reads no ~/.aws file with the SDK settings the stack deploys, and both files without them', async () => {
    const [deployed, defaults] = await Promise.all([
      invoke(node, bundle, CREDENTIALS),
      invoke(node, bundle, CREDENTIALS, [], { sdkSettings: false }),
    ]);
    expect(deployed.outcome.result?.statusCode).toBe(404);
    expect(deployed.configReads).toEqual([]);
    // The capture sees the reads: the SDK's defaults alone send the first request to both files.
    expect(defaults.outcome.result?.statusCode).toBe(404);
    expect(defaults.configReads.map((read) => read.replace(/.*[/\\]/, '')).sort()).toEqual([
      'config',
      'credentials',
    ]);
    // The settings are the SDK's defaults: the request is the same but for the app id in the user agent
    // (and so its signature).
    const without = ({ 'user-agent': _, authorization: _a, ...rest }: Record<string, string> = {}) => rest;
    expect(without(deployed.requests[0]?.headers)).toEqual(without(defaults.requests[0]?.headers));
    expect(deployed.requests[0]?.headers.host).toBe('dynamodb.eu-west-1.amazonaws.com');
    expect(deployed.requests[0]?.body).toBe(defaults.requests[0]?.body);
    expect(deployed.requests[0]?.headers['user-agent']).toBe(
      `${defaults.requests[0]?.headers['user-agent']} app/${LAMBDA_SDK_ENVIRONMENT.AWS_SDK_UA_APP_ID}`,
    );
  });

  it('fails at once with a clear message when the environment holds no credentials', async () => {
    const bundled = await invoke(node, bundle, {});
    expect(bundled.outcome.result?.statusCode).toBe(500);
    expect(bundled.requests).toEqual([]);
    const [logged] = bundled.logs.filter((line) => line.level === 'error');
    expect(JSON.stringify(logged)).toContain(MISSING_CREDENTIALS_MESSAGE);
  });

  it('fails the same way with only one of the two variables', async () => {
    const bundled = await invoke(node, bundle, { AWS_ACCESS_KEY_ID: CREDENTIALS.AWS_ACCESS_KEY_ID });
    expect(bundled.outcome.result?.statusCode).toBe(500);
    expect(bundled.requests).toEqual([]);
  });
});
