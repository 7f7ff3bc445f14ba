import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';

export const API_DOMAIN = 'abc123def4.execute-api.us-east-1.amazonaws.com';
export const API_STAGE = 'prod';
export const METHOD_ARN =
  'arn:aws:execute-api:us-east-1:123456789012:abc123def4/prod/POST/api/embed/sessions';
/** The key owner the authorizer puts into the request context unless a test says otherwise. */
export const KEY_OWNER = { userId: 'owner-1', keyId: 'key_0123456789abcdef01234567' } as const;

export interface ProxyEventOptions {
  method?: string;
  /** The request path; also the resource unless `resource` is given. */
  path?: string;
  /** The route template, such as `/api/embed/sessions/{id}`. */
  resource?: string;
  body?: string | null;
  headers?: Record<string, string>;
  query?: Record<string, string> | null;
  pathParameters?: Record<string, string> | null;
  isBase64Encoded?: boolean;
  /** The authorizer context; `null` means the route has no authorizer. */
  authorizer?: Record<string, string> | null;
  domainName?: string;
  stage?: string;
  requestId?: string;
  /** The IAM caller API Gateway verified (`requestContext.identity.userArn`), on an AWS_IAM route. */
  userArn?: string;
}

/**
 * An API Gateway REST API (v1) proxy event, as the gateway passes it to a function. Defaults to
 * `POST /api/embed/sessions` with an empty JSON object, after the authorizer allowed `KEY_OWNER`.
 */
export function proxyEvent(options: ProxyEventOptions = {}): APIGatewayProxyEvent {
  const stage = options.stage ?? API_STAGE;
  const method = options.method ?? 'POST';
  const path = options.path ?? '/api/embed/sessions';
  const resource = options.resource ?? path;
  const query = options.query ?? null;
  return {
    resource,
    path,
    httpMethod: method,
    headers: options.headers ?? { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: query
      ? Object.fromEntries(Object.entries(query).map(([key, value]) => [key, [value]]))
      : null,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body === undefined ? (method === 'POST' ? '{}' : null) : options.body,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123def4',
      authorizer:
        options.authorizer === undefined
          ? { ...KEY_OWNER, principalId: KEY_OWNER.userId }
          : options.authorizer,
      domainName: options.domainName ?? API_DOMAIN,
      domainPrefix: 'abc123def4',
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: '203.0.113.7',
        user: null,
        userAgent: 'vitest',
        userArn: options.userArn ?? null,
      },
      path: `/${stage}${path}`,
      stage,
      requestId: options.requestId ?? 'gw-request-id',
      requestTimeEpoch: 1_767_225_600_000,
      resourceId: 'res123',
      resourcePath: resource,
    },
  };
}

/** A JSON POST with the given body object serialized. */
export function jsonEvent(
  body: unknown,
  options: Omit<ProxyEventOptions, 'body'> = {},
): APIGatewayProxyEvent {
  return proxyEvent({ ...options, body: JSON.stringify(body) });
}

/** `GET /embed` as API Gateway passes it: no authorizer, the token in the query string. */
export function embedEvent(
  query: Record<string, string> | null,
  headers: Record<string, string> = { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
): APIGatewayProxyEvent {
  return proxyEvent({ method: 'GET', path: '/embed', query, headers, authorizer: null });
}

/** A TOKEN authorizer event as API Gateway sends it. */
export function tokenEvent(
  authorizationToken: string,
  methodArn = METHOD_ARN,
): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken, methodArn };
}

/** A Lambda context good enough for middy, with `remainingMs` left before the function's timeout. */
export function lambdaContext(awsRequestId = 'lambda-request-id', remainingMs = 10_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'test-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test-function',
    memoryLimitInMB: '256',
    awsRequestId,
    logGroupName: '/aws/lambda/test-function',
    logStreamName: '2026/01/01/[$LATEST]0123456789',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
