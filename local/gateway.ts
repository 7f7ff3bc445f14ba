import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import {
  type GatewayReply,
  type GatewayResponseType,
  gatewayResponse,
  methodNotAllowed,
} from '#lib/adapters/http/gateway-responses';
import { REQUEST_ID_HEADER } from '#lib/adapters/http/request-id';
import { headerValue } from '#lib/adapters/http/response';
import { CLIENT_LIMITED_RESPONSE } from '#lib/definitions/rate-limits';
import {
  AUTHORIZER_FUNCTION,
  FUNCTIONS,
  type FunctionName,
  ROUTES,
  runtimeOf,
} from '#lib/definitions/routes';
import { isRateLimitValue, type RateLimit } from '#lib/domain/api-key';
import type { Logger } from '#lib/platform/logger';
import {
  type ClientLimit,
  ClientRateLimiter,
  KeyRateLimiter,
  type MonotonicClock,
  type RateLimitDecision,
} from './rate-limiter';
import { resolveResource } from './routing';
import { type IamCaller, type LocalIamCredential, verifySignature } from './sigv4';

/** A Lambda handler as exported by `functions/*.ts`. */
export type LambdaHandler = (event: never, context: Context) => Promise<unknown>;

/**
 * One method of the API: a Lambda proxy integration of `function`, behind the TOKEN authorizer when
 * `auth` is `apiKey`. The local runtime's come from lib/definitions/routes.ts; the assembly runner's from
 * the synthesized template (where `function` is the function's logical id).
 */
export interface ApiRoute {
  method: string;
  path: string;
  function: string;
  /** `iam`: AWS_IAM authorization, a SigV4 signature checked against `ApiModel.iam` (local/sigv4.ts). */
  auth: 'apiKey' | 'iam' | 'none';
  /** The method needs a usage identifier (a usage plan's key); by default, when `auth` is `apiKey`. */
  apiKeyRequired?: boolean;
}

/**
 * What the emulator serves: the one description of a REST API that both the local runtime (from
 * lib/definitions) and the assembly runner (from the synthesized template) build.
 */
export interface ApiModel {
  routes: readonly ApiRoute[];
  /** The stage: in method ARNs and `requestContext.stage`. */
  stage: string;
  /** Where the stage starts in request paths: '' locally, `/<stage>` as on an execute-api domain. */
  basePath: string;
  accountId: string;
  region: string;
  apiId: string;
  authorizer: {
    function: string;
    /** The header of the identity source (`method.request.header.<name>`). */
    identityHeader: string;
    /** How long a returned policy is cached per identity (0: the authorizer runs on every request). */
    resultTtlSeconds: number;
  };
  /**
   * The callers AWS_IAM methods accept, standing in for IAM: each credential, its principal and what its
   * policies allow. None: every signed request to such a method is refused.
   */
  iam?: { credentials: readonly LocalIamCredential[] };
  /** Where a usage plan's key comes from: the authorizer's `usageIdentifierKey`, or `x-api-key`. */
  apiKeySource: 'AUTHORIZER' | 'HEADER';
  /** The limit of keys without their own: the default usage plan's throttle. */
  apiKeyLimits: RateLimit;
  /** The stage's web ACL's limit per client address (the embed page's), or undefined when it has none. */
  clientLimit: ClientLimit | undefined;
  /** A gateway response as configured. */
  response(type: GatewayResponseType): GatewayReply;
  /** The answer to a method the resource does not have (its `ANY` mock), or undefined when none. */
  methodNotAllowed(path: string, allowed: string[]): GatewayReply | undefined;
}

/**
 * Invokes a function as Lambda does: resolves to what the handler returned, rejects with the error it
 * threw (or its init error).
 */
export type Invoke = (functionName: string, event: unknown, requestId: string) => Promise<unknown>;

/** The emulator of API Gateway: an API, how to invoke its functions, and where it is served. */
export interface EmulatorOptions {
  api: ApiModel;
  invoke: Invoke;
  /** Host (and port) that API Gateway would report as `requestContext.domainName`. */
  domainName: string;
  logger: Logger;
  /** The rate limiter's and the authorizer cache's clock; the real monotonic one unless a test passes its own. */
  clock?: MonotonicClock;
}

/** API Gateway REST APIs refuse bodies over 10 MB; Lambda refuses invocation payloads over 6 MB. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

const ACCOUNT_ID = '000000000000';
const API_ID = 'local';
const STAGE = 'local';

export interface GatewayOptions {
  handlers: Record<FunctionName, LambdaHandler>;
  /** The credentials the provisioning routes accept (AWS_IAM's stand-in); none refuses them all. */
  iamCredentials?: readonly LocalIamCredential[];
  /** Host (and port) that API Gateway would report as `requestContext.domainName`. */
  domainName: string;
  logger: Logger;
  /** Headers of every gateway-made response (see `gatewaySecurityHeaders`), as the CDK stack sets them. */
  securityHeaders: Readonly<Record<string, string>>;
  /** The limit of API keys without their own, as the stack's default usage plan sets it. */
  apiKeyLimits: RateLimit;
  /** The embed page's limit per client address, as the stage's web ACL sets it. */
  clientLimit: ClientLimit;
  /** The rate limiter's clock; the real monotonic one unless a test passes its own. */
  clock?: MonotonicClock;
}

/** `fromFunction`: the function's own answer, which names its request itself; the gateway names the rest. */
type Reply = {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  fromFunction?: boolean;
};

/**
 * A local stand-in for API Gateway (REST API, Lambda proxy integration): the same routes, a TOKEN
 * authorizer run before protected routes (without result caching, so a revoked key is refused at once),
 * per-key throttling like a usage plan's, v1 proxy events, and the same JSON gateway responses the CDK
 * stack configures. The handlers run in this process (`npm start`).
 */
export function createGateway(options: GatewayOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return createApiGateway({
    api: localApi(options),
    invoke: inProcess(options.handlers),
    domainName: options.domainName,
    logger: options.logger,
    clock: options.clock,
  });
}

/** The API of lib/definitions/routes.ts, as the local runtime serves it. */
export function localApi(
  options: Pick<GatewayOptions, 'securityHeaders' | 'apiKeyLimits' | 'clientLimit' | 'iamCredentials'>,
): ApiModel {
  return {
    routes: ROUTES,
    iam: { credentials: options.iamCredentials ?? [] },
    stage: STAGE,
    basePath: '',
    accountId: ACCOUNT_ID,
    region: 'local',
    apiId: API_ID,
    authorizer: { function: AUTHORIZER_FUNCTION, identityHeader: 'Authorization', resultTtlSeconds: 0 },
    apiKeySource: 'AUTHORIZER',
    apiKeyLimits: options.apiKeyLimits,
    clientLimit: options.clientLimit,
    response: (type) => gatewayResponse(type, options.securityHeaders),
    methodNotAllowed: (_path, allowed) => methodNotAllowed(allowed, options.securityHeaders),
  };
}

/** Invokes the handler exports in this process, each with a Lambda-like context. */
function inProcess(handlers: Record<FunctionName, LambdaHandler>): Invoke {
  return (functionName, event, requestId) =>
    handlers[functionName as FunctionName](
      event as never,
      lambdaContext(functionName as FunctionName, requestId),
    );
}

/**
 * The one emulator of API Gateway (REST API, Lambda proxy integration) that the local runtime and the
 * assembly runner share: routing by resource, the TOKEN authorizer (its identity header, its result
 * cache, the returned policy evaluated against the method ARN), the usage plan's per-key throttling, v1
 * proxy events, and the configured gateway responses.
 */
export function createApiGateway(
  options: EmulatorOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const limiter = new KeyRateLimiter(options.api.apiKeyLimits, options.clock);
  const clients = options.api.clientLimit && new ClientRateLimiter(options.api.clientLimit, options.clock);
  const cache = new AuthorizerCache(options.clock);
  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    // The web ACL decides before API Gateway routes or authorizes anything, on the whole request path.
    const refused =
      clients?.counts(requestUrl(req.url)?.pathname ?? '') &&
      !clients.take(req.socket.remoteAddress ?? 'unknown');
    (refused ? Promise.resolve(clientLimitedReply()) : route(options, limiter, cache, req, requestId))
      .catch((error: unknown) => {
        options.logger.error('local gateway failure', { requestId, errorMessage: (error as Error).message });
        return gatewayReply(options, 'DEFAULT_5XX');
      })
      .then((reply) => {
        // As the stack's gateway responses map `context.requestId` into X-Request-Id.
        res.writeHead(
          reply.status,
          reply.fromFunction ? reply.headers : { ...reply.headers, [REQUEST_ID_HEADER]: requestId },
        );
        res.end(reply.body);
        // The path only: the query string may hold an embed token.
        options.logger.info('request', {
          requestId,
          method: req.method,
          path: (req.url ?? '/').split('?')[0],
          status: reply.status,
          ms: Math.round(performance.now() - started),
        });
      })
      // Nothing a client sends may end the process: a failure here only costs this connection.
      .catch((error: unknown) => {
        options.logger.error('local gateway failure', { requestId, errorMessage: (error as Error).message });
        res.destroy();
      });
  };
}

/** What the web ACL's rate-based rule answers a client over its limit (WAF's custom response). */
function clientLimitedReply(): Reply {
  return {
    status: CLIENT_LIMITED_RESPONSE.status,
    headers: {
      'Content-Type': CLIENT_LIMITED_RESPONSE.contentType,
      'Retry-After': String(CLIENT_LIMITED_RESPONSE.retryAfterSeconds),
    },
    body: Buffer.from(CLIENT_LIMITED_RESPONSE.body, 'utf8'),
  };
}

/**
 * The request target as a URL. Only paths are taken (`//[` is a path here, not a host), and what still
 * does not parse is undefined, so no request target can throw.
 */
function requestUrl(target: string | undefined): URL | undefined {
  if (!target?.startsWith('/')) return undefined;
  try {
    return new URL(`http://local${target}`);
  } catch {
    return undefined;
  }
}

/** The path within the stage that starts at `basePath`, or undefined for a path outside it. */
function stagePath(pathname: string, basePath: string): string | undefined {
  if (!basePath) return pathname;
  return pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : undefined;
}

async function route(
  options: EmulatorOptions,
  limiter: KeyRateLimiter,
  cache: AuthorizerCache,
  req: IncomingMessage,
  requestId: string,
): Promise<Reply> {
  const url = requestUrl(req.url);
  if (!url) return gatewayReply(options, 'DEFAULT_4XX');
  const body = await readBody(req);
  if (body === undefined) return gatewayReply(options, 'REQUEST_TOO_LARGE');
  const path = stagePath(url.pathname, options.api.basePath);
  if (path === undefined) return gatewayReply(options, 'MISSING_AUTHENTICATION_TOKEN');
  url.pathname = path;

  const resource = resolveResource(options.api.routes, url.pathname);
  if (!resource) return gatewayReply(options, 'MISSING_AUTHENTICATION_TOKEN');
  const matched = resource.routes.find((r) => r.method === req.method);
  if (!matched) {
    const allowed = resource.routes.map((r) => r.method);
    const reply = options.api.methodNotAllowed(resource.path, allowed);
    return reply ? toReply(reply) : gatewayReply(options, 'MISSING_AUTHENTICATION_TOKEN');
  }

  const headers = singleHeaders(req);
  let authorizer: Record<string, unknown> | null = null;
  let usageIdentifierKey: string | undefined;
  let iamCaller: IamCaller | undefined;
  if (matched.auth === 'iam') {
    const outcome = await authorizeIam(options, req, url, matched, body);
    if (typeof outcome === 'string') return gatewayReply(options, outcome);
    iamCaller = outcome;
  }
  if (matched.auth === 'apiKey') {
    const outcome = await authorize(
      options,
      cache,
      matched,
      url.pathname,
      headerValue(headers, options.api.authorizer.identityHeader),
      requestId,
    );
    if (typeof outcome === 'string') return gatewayReply(options, outcome);
    usageIdentifierKey = outcome.usageIdentifierKey;
    authorizer = outcome.context;
  }
  let limited: RateLimitDecision | undefined;
  if (matched.apiKeyRequired ?? matched.auth === 'apiKey') {
    // With the authorizer as API key source, a key reaches its usage plan only through the identifier the
    // authorizer names; API Gateway refuses a request without one as an invalid key.
    const usageId =
      options.api.apiKeySource === 'AUTHORIZER' ? usageIdentifierKey : headerValue(headers, 'x-api-key');
    if (!usageId) return gatewayReply(options, 'INVALID_API_KEY');
    limited = limiter.take(usageId, limitsOf(authorizer ?? {}));
  }
  // Every answer after the authorizer carries the key's limits: the 429, the function's own errors, too.
  if (limited && !limited.allowed) return withHeaders(gatewayReply(options, 'THROTTLED'), limited.headers);
  const reply = await invoke(options, {
    req,
    url,
    matched,
    pathParameters: resource.pathParameters,
    headers,
    body,
    authorizer,
    iamCaller,
    requestId,
  });
  return limited ? withHeaders(reply, limited.headers) : reply;
}

/**
 * AWS_IAM authorization as API Gateway applies it: the signature verifies for one of the credentials
 * (local/sigv4.ts), then that principal's policies must allow `execute-api:Invoke` on the method.
 */
async function authorizeIam(
  options: EmulatorOptions,
  req: IncomingMessage,
  url: URL,
  matched: ApiRoute,
  body: Buffer,
): Promise<IamCaller | GatewayResponseType> {
  const { api } = options;
  const lower: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    lower[(req.rawHeaders[i] as string).toLowerCase()] = req.rawHeaders[i + 1] as string;
  const sent = requestUrl(req.url);
  const verified = await verifySignature(
    {
      method: req.method ?? 'GET',
      path: sent?.pathname ?? url.pathname,
      query: sent?.searchParams ?? url.searchParams,
      headers: lower,
      body,
    },
    {
      region: api.region,
      accountId: api.accountId,
      credentials: api.iam?.credentials ?? [],
      now: new Date(),
    },
  );
  if (typeof verified === 'string') return verified;
  const methodArn = `arn:aws:execute-api:${api.region}:${api.accountId}:${api.apiId}/${api.stage}/${matched.method}${url.pathname}`;
  if (verified.credential.allows && !verified.credential.allows(methodArn)) return 'ACCESS_DENIED';
  return verified.caller;
}

/** A request the gateway has routed and authorized, on its way to the function. */
interface RoutedRequest {
  req: IncomingMessage;
  url: URL;
  matched: ApiRoute;
  pathParameters: Record<string, string> | null;
  headers: Record<string, string>;
  body: Buffer;
  authorizer: Record<string, unknown> | null;
  /** The verified IAM caller of an AWS_IAM method. */
  iamCaller?: IamCaller;
  requestId: string;
}

/** What a route does once the gateway lets the request through: invoke its function, as API Gateway does. */
async function invoke(options: EmulatorOptions, request: RoutedRequest): Promise<Reply> {
  const { matched, body, requestId } = request;
  // Lambda's payload limit applies when the gateway invokes the function, after the authorizer ran.
  if (body.length > LAMBDA_MAX_PAYLOAD_BYTES) return gatewayReply(options, 'REQUEST_TOO_LARGE');

  const event = proxyEvent(options, request);
  let result: APIGatewayProxyResult;
  try {
    result = (await options.invoke(matched.function, event, requestId)) as APIGatewayProxyResult;
  } catch (error) {
    // An unhandled function error: API Gateway answers 502 without showing it.
    options.logger.error('function failed', {
      function: matched.function,
      errorMessage: (error as Error).message,
    });
    return gatewayReply(options, 'INTEGRATION_FAILURE');
  }
  if (!result || typeof result.statusCode !== 'number') return gatewayReply(options, 'INTEGRATION_FAILURE');
  return fromResult(result);
}

/** What an Allow policy hands on: the context for the function, and the key's usage identifier. */
interface Authorized {
  context: Record<string, unknown>;
  usageIdentifierKey: string | undefined;
}

/**
 * The authorizer's result cache: the policy returned for an identity, reused until its TTL passes. API
 * Gateway evaluates a cached policy against each request's own method ARN, which is why the authorizer
 * allows the whole stage.
 */
class AuthorizerCache {
  private readonly entries = new Map<string, { policy: APIGatewayAuthorizerResult; until: number }>();

  constructor(private readonly now: MonotonicClock = () => performance.now()) {}

  get(identity: string): APIGatewayAuthorizerResult | undefined {
    const entry = this.entries.get(identity);
    if (entry && entry.until > this.now()) return entry.policy;
    this.entries.delete(identity);
    return undefined;
  }

  set(identity: string, policy: APIGatewayAuthorizerResult, ttlSeconds: number): void {
    if (ttlSeconds > 0) this.entries.set(identity, { policy, until: this.now() + ttlSeconds * 1000 });
  }
}

/** Runs the TOKEN authorizer as API Gateway does; returns what it allowed or the gateway response to send. */
async function authorize(
  options: EmulatorOptions,
  cache: AuthorizerCache,
  matched: ApiRoute,
  path: string,
  token: string | undefined,
  requestId: string,
): Promise<Authorized | GatewayResponseType> {
  const { api } = options;
  // With identitySource = Authorization, API Gateway answers 401 itself when the header is absent.
  if (!token) return 'UNAUTHORIZED';
  const methodArn = `arn:aws:execute-api:${api.region}:${api.accountId}:${api.apiId}/${api.stage}/${matched.method}${path}`;
  let policy = cache.get(token);
  if (!policy) {
    const event: APIGatewayTokenAuthorizerEvent = { type: 'TOKEN', authorizationToken: token, methodArn };
    try {
      policy = (await options.invoke(
        api.authorizer.function,
        event,
        requestId,
      )) as APIGatewayAuthorizerResult;
    } catch (error) {
      return (error as Error)?.message === 'Unauthorized' ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE';
    }
    if (!policy?.principalId || !policy.policyDocument) return 'AUTHORIZER_FAILURE';
    cache.set(token, policy, api.authorizer.resultTtlSeconds);
  }
  if (!policyAllows(policy, methodArn)) return 'ACCESS_DENIED';
  return {
    context: { ...(policy.context ?? {}), principalId: policy.principalId },
    usageIdentifierKey: policy.usageIdentifierKey ?? undefined,
  };
}

/**
 * The key's own limits from the authorizer context (numbers, or strings as API Gateway would pass them on),
 * or null for the defaults: both parts valid, or none.
 */
function limitsOf(context: Record<string, unknown>): RateLimit | null {
  const rate = Number(context.rateLimit);
  const burst = Number(context.burstLimit);
  return isRateLimitValue('rate', rate) && isRateLimitValue('burst', burst) ? { rate, burst } : null;
}

/** IAM-style evaluation of an authorizer policy for one method ARN: an explicit Deny wins. */
export function policyAllows(policy: APIGatewayAuthorizerResult, methodArn: string): boolean {
  let allowed = false;
  for (const statement of policy.policyDocument.Statement) {
    const s = statement as { Effect: string; Action?: string | string[]; Resource?: string | string[] };
    const actions = ([] as string[]).concat(s.Action ?? []);
    const resources = ([] as string[]).concat(s.Resource ?? []);
    if (!actions.some((a) => a === '*' || a === 'execute-api:*' || a === 'execute-api:Invoke')) continue;
    if (!resources.some((r) => globToRegExp(r).test(methodArn))) continue;
    if (s.Effect === 'Deny') return false;
    if (s.Effect === 'Allow') allowed = true;
  }
  return allowed;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

function proxyEvent(options: EmulatorOptions, request: RoutedRequest): APIGatewayProxyEvent {
  const { api } = options;
  const { req, url, matched, pathParameters, headers, body, authorizer, iamCaller, requestId } = request;
  const multiValueHeaders = grouped(headerPairs(req));
  const multiQuery = grouped(url.searchParams);
  // The last value of each name wins, as in API Gateway's single-value maps.
  const query = Object.fromEntries(url.searchParams);
  const hasQuery = multiQuery.size > 0;
  return {
    resource: matched.path,
    path: url.pathname,
    httpMethod: matched.method,
    headers,
    multiValueHeaders: Object.fromEntries(multiValueHeaders),
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? Object.fromEntries(multiQuery) : null,
    pathParameters,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: api.accountId,
      apiId: api.apiId,
      authorizer,
      domainName: options.domainName,
      httpMethod: matched.method,
      path: `/${api.stage}${url.pathname}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: matched.path,
      stage: api.stage,
      identity: {
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['User-Agent'] ?? null,
        ...(iamCaller ?? {}),
      },
    } as APIGatewayProxyEvent['requestContext'],
  };
}

function lambdaContext(functionName: FunctionName, requestId: string): Context {
  const { memoryMb, timeoutSeconds } = runtimeOf(FUNCTIONS[functionName]);
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:${ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Reads the body, or returns undefined once it passes API Gateway's 10 MB limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > GATEWAY_MAX_BODY_BYTES) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The request's headers as name and value pairs, names as the client sent them, in order. */
function headerPairs(req: IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    pairs.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
  return pairs;
}

/**
 * Every value of each name, in order. A Map, not an object literal: a caller's names are data, and one
 * named `constructor` or `__proto__` must not meet what every object inherits. `Object.fromEntries` then
 * makes each name an own property, `__proto__` included.
 */
function grouped(pairs: Iterable<[string, string]>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const [name, value] of pairs) groups.set(name, [...(groups.get(name) ?? []), value]);
  return groups;
}

/** Header names as the client sent them, last value wins (API Gateway's `headers`). */
function singleHeaders(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(headerPairs(req));
}

function gatewayReply(options: EmulatorOptions, type: GatewayResponseType): Reply {
  return toReply(options.api.response(type));
}

function withHeaders(reply: Reply, headers: Record<string, string>): Reply {
  return { ...reply, headers: { ...reply.headers, ...headers } };
}

function toReply(response: GatewayReply): Reply {
  return { status: response.status, headers: response.headers, body: Buffer.from(response.body) };
}

function fromResult(result: APIGatewayProxyResult): Reply {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}))
    headers[name] = values.map(String);
  const body = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  return { status: result.statusCode, headers, body, fromFunction: true };
}
