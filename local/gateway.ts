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
} from '#lib/definitions/gateway-responses';
import {
  AUTHORIZER_FUNCTION,
  FUNCTIONS,
  type FunctionName,
  ROUTES,
  type RouteDefinition,
  runtimeOf,
} from '#lib/definitions/routes';
import { isRateLimitValue, type RateLimit } from '#lib/domain/api-key';
import { REQUEST_ID_HEADER } from '#lib/http/request-id';
import { headerValue } from '#lib/http/response';
import type { Logger } from '#lib/platform/logger';
import { KeyRateLimiter, type MonotonicClock, type RateLimitDecision } from './rate-limiter';
import { resolveResource } from './routing';

/** A Lambda handler as exported by `functions/*.ts`. */
export type LambdaHandler = (event: never, context: Context) => Promise<unknown>;

/** API Gateway REST APIs refuse bodies over 10 MB; Lambda refuses invocation payloads over 6 MB. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

const ACCOUNT_ID = '000000000000';
const API_ID = 'local';
const STAGE = 'local';

export interface GatewayOptions {
  handlers: Record<FunctionName, LambdaHandler>;
  /** Host (and port) that API Gateway would report as `requestContext.domainName`. */
  domainName: string;
  logger: Logger;
  /** Headers of every gateway-made response (see `gatewaySecurityHeaders`), as the CDK stack sets them. */
  securityHeaders: Readonly<Record<string, string>>;
  /** The limit of API keys without their own, as the stack's default usage plan sets it. */
  apiKeyLimits: RateLimit;
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
 * stack configures.
 */
export function createGateway(options: GatewayOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const limiter = new KeyRateLimiter(options.apiKeyLimits, options.clock);
  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    route(options, limiter, req, requestId)
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

async function route(
  options: GatewayOptions,
  limiter: KeyRateLimiter,
  req: IncomingMessage,
  requestId: string,
): Promise<Reply> {
  const url = requestUrl(req.url);
  if (!url) return gatewayReply(options, 'DEFAULT_4XX');
  const body = await readBody(req);
  if (body === undefined) return gatewayReply(options, 'REQUEST_TOO_LARGE');

  const resource = resolveResource(ROUTES, url.pathname);
  if (!resource) return gatewayReply(options, 'MISSING_AUTHENTICATION_TOKEN');
  const matched = resource.routes.find((r) => r.method === req.method);
  if (!matched)
    return toReply(
      methodNotAllowed(
        resource.routes.map((r) => r.method),
        options.securityHeaders,
      ),
    );

  const headers = singleHeaders(req);
  let authorizer: Record<string, unknown> | null = null;
  let limited: RateLimitDecision | undefined;
  if (matched.auth === 'apiKey') {
    const outcome = await authorize(
      options,
      matched,
      url.pathname,
      headerValue(headers, 'authorization'),
      requestId,
    );
    if (typeof outcome === 'string') return gatewayReply(options, outcome);
    // With the authorizer as API key source, a key reaches its usage plan only through the identifier the
    // authorizer names; API Gateway refuses a request without one as an invalid key.
    if (!outcome.usageIdentifierKey) return gatewayReply(options, 'INVALID_API_KEY');
    limited = limiter.take(outcome.usageIdentifierKey, limitsOf(outcome.context));
    authorizer = outcome.context;
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
    requestId,
  });
  return limited ? withHeaders(reply, limited.headers) : reply;
}

/** A request the gateway has routed and authorized, on its way to the function. */
interface RoutedRequest {
  req: IncomingMessage;
  url: URL;
  matched: RouteDefinition;
  pathParameters: Record<string, string> | null;
  headers: Record<string, string>;
  body: Buffer;
  authorizer: Record<string, unknown> | null;
  requestId: string;
}

/** What a route does once the gateway lets the request through: invoke its function, as API Gateway does. */
async function invoke(options: GatewayOptions, request: RoutedRequest): Promise<Reply> {
  const { matched, body, requestId } = request;
  // Lambda's payload limit applies when the gateway invokes the function, after the authorizer ran.
  if (body.length > LAMBDA_MAX_PAYLOAD_BYTES) return gatewayReply(options, 'REQUEST_TOO_LARGE');

  const event = proxyEvent(options, request);
  let result: APIGatewayProxyResult;
  try {
    result = (await options.handlers[matched.function](
      event as never,
      lambdaContext(matched.function, requestId),
    )) as APIGatewayProxyResult;
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

/** Runs the TOKEN authorizer as API Gateway does; returns what it allowed or the gateway response to send. */
async function authorize(
  options: GatewayOptions,
  matched: RouteDefinition,
  path: string,
  token: string | undefined,
  requestId: string,
): Promise<Authorized | GatewayResponseType> {
  // With identitySource = Authorization, API Gateway answers 401 itself when the header is absent.
  if (!token) return 'UNAUTHORIZED';
  const methodArn = `arn:aws:execute-api:local:${ACCOUNT_ID}:${API_ID}/${STAGE}/${matched.method}${path}`;
  const event: APIGatewayTokenAuthorizerEvent = { type: 'TOKEN', authorizationToken: token, methodArn };
  let policy: APIGatewayAuthorizerResult;
  try {
    policy = (await options.handlers[AUTHORIZER_FUNCTION](
      event as never,
      lambdaContext(AUTHORIZER_FUNCTION, requestId),
    )) as APIGatewayAuthorizerResult;
  } catch (error) {
    return (error as Error)?.message === 'Unauthorized' ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE';
  }
  if (!policy?.principalId || !policy.policyDocument) return 'AUTHORIZER_FAILURE';
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

function proxyEvent(options: GatewayOptions, request: RoutedRequest): APIGatewayProxyEvent {
  const { req, url, matched, pathParameters, headers, body, authorizer, requestId } = request;
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), req.rawHeaders[i + 1] as string];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) {
    query[key] = value;
    multiQuery[key] = [...(multiQuery[key] ?? []), value];
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: matched.path,
    path: url.pathname,
    httpMethod: matched.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: ACCOUNT_ID,
      apiId: API_ID,
      authorizer,
      domainName: options.domainName,
      httpMethod: matched.method,
      path: `/${STAGE}${url.pathname}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: matched.path,
      stage: STAGE,
      identity: {
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['User-Agent'] ?? null,
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

/** Header names as the client sent them, last value wins (API Gateway's `headers`). */
function singleHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers[req.rawHeaders[i] as string] = req.rawHeaders[i + 1] as string;
  return headers;
}

function gatewayReply(options: GatewayOptions, type: GatewayResponseType): Reply {
  return toReply(gatewayResponse(type, options.securityHeaders));
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
