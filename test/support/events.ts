import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';

export const API_DOMAIN = 'abc123def4.execute-api.us-east-1.amazonaws.com';
export const API_STAGE = 'prod';
export const METHOD_ARN =
  'arn:aws:execute-api:us-east-1:123456789012:abc123def4/prod/POST/api/embed/sessions';

export interface ProxyEventOptions {
  body?: string | null;
  headers?: Record<string, string>;
  isBase64Encoded?: boolean;
  /** The authorizer context; `null` means the route has no authorizer. */
  authorizer?: Record<string, string> | null;
  domainName?: string;
  stage?: string;
}

/** An API Gateway REST API (v1) proxy event for `POST /api/embed/sessions`. */
export function proxyEvent(options: ProxyEventOptions = {}): APIGatewayProxyEvent {
  const stage = options.stage ?? API_STAGE;
  return {
    resource: '/api/embed/sessions',
    path: '/api/embed/sessions',
    httpMethod: 'POST',
    headers: options.headers ?? { 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: options.body === undefined ? '{}' : options.body,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123def4',
      authorizer:
        options.authorizer === undefined
          ? { userId: 'owner-1', keyId: 'key_0123456789abcdef01234567', principalId: 'owner-1' }
          : options.authorizer,
      domainName: options.domainName ?? API_DOMAIN,
      domainPrefix: 'abc123def4',
      protocol: 'HTTP/1.1',
      httpMethod: 'POST',
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
        userArn: null,
      },
      path: `/${stage}/api/embed/sessions`,
      stage,
      requestId: 'gw-request-id',
      requestTimeEpoch: 1_767_225_600_000,
      resourceId: 'res123',
      resourcePath: '/api/embed/sessions',
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

/** A TOKEN authorizer event as API Gateway sends it. */
export function tokenEvent(
  authorizationToken: string,
  methodArn = METHOD_ARN,
): APIGatewayTokenAuthorizerEvent {
  return { type: 'TOKEN', authorizationToken, methodArn };
}

/** A Lambda context good enough for middy (with a remaining-time budget). */
export function lambdaContext(awsRequestId = 'lambda-request-id'): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'test-function',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:test-function',
    memoryLimitInMB: '256',
    awsRequestId,
    logGroupName: '/aws/lambda/test-function',
    logStreamName: '2026/01/01/[$LATEST]0123456789',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
