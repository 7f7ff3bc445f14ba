import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { type AuthorizedKey, type KeyOwner, usageIdentifierOf } from '#lib/domain/api-key';
import { bearerCredential } from '#lib/domain/credentials';
import { headerValue } from './response';

/**
 * The API key owner that the authorizer put into the request context. Its absence is a deployment
 * mistake (route without authorizer), so it is a plain error and becomes a 500, never a pass.
 */
export function keyOwnerOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): KeyOwner {
  const context = event.requestContext.authorizer;
  const userId = context?.userId;
  const keyId = context?.keyId;
  if (typeof userId !== 'string' || userId === '' || typeof keyId !== 'string') {
    throw new Error('Authorizer context is missing: is the route wired to the API key authorizer?');
  }
  return { userId, keyId };
}

/**
 * The IAM principal that signed a request to an `auth: 'iam'` route, as API Gateway verified it: its ARN
 * (`requestContext.identity.userArn`: an IAM user, or an assumed role's session). Its absence is a
 * deployment mistake (a route without AWS_IAM authorization), so it is a plain error, never a pass.
 */
export function operatorOf(event: Pick<APIGatewayProxyEvent, 'requestContext'>): string {
  const arn = event.requestContext.identity?.userArn;
  if (typeof arn !== 'string' || !arn.startsWith('arn:')) {
    throw new Error('No IAM caller in the request context: is the route wired to AWS_IAM authorization?');
  }
  return arn;
}

/**
 * The raw API key of the request, as the authorizer saw it. Only for what must be bound to the key
 * itself (signed cursors, sealed idempotent answers); never logged, never stored.
 */
export function apiKeyOf(event: Pick<APIGatewayProxyEvent, 'headers'>): string {
  const key = bearerCredential(headerValue(event.headers, 'authorization'));
  if (!key) throw new Error('Authorization header is missing: is the route wired to the API key authorizer?');
  return key;
}

/** A path parameter of the route (`{id}`), or an empty string when the route has none of that name. */
export function pathParameter(event: Pick<APIGatewayProxyEvent, 'pathParameters'>, name: string): string {
  return event.pathParameters?.[name] ?? '';
}

/**
 * The public base URL of this API as API Gateway saw the request (its domain name and stage), never the
 * client's own Host header, which anyone can forge.
 */
export function apiBaseUrl(event: Pick<APIGatewayProxyEvent, 'requestContext'>): string {
  const { domainName, stage } = event.requestContext;
  if (!domainName) throw new Error('API Gateway request context has no domainName; set PUBLIC_BASE_URL');
  return stage && stage !== '$default' ? `https://${domainName}/${stage}` : `https://${domainName}`;
}

/**
 * An Allow policy for every method of the API's stage. A wildcard resource matters: API Gateway caches
 * the policy per key, and a policy naming only the first method would then refuse every other route.
 * `usageIdentifierKey` names the key's usage plan entry (the API's key source is the authorizer), which is
 * how API Gateway throttles each key; the key's own limits, if any, ride in the context for the local
 * gateway, which throttles the same way.
 */
export function allowPolicy(key: AuthorizedKey, methodArn: string): APIGatewayAuthorizerResult {
  const stageArn = stageArnOf(methodArn);
  if (!stageArn) throw new Error('methodArn is malformed');
  return {
    principalId: key.userId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${stageArn}/*` }],
    },
    context: {
      userId: key.userId,
      keyId: key.keyId,
      ...(key.limits ? { rateLimit: key.limits.rate, burstLimit: key.limits.burst } : {}),
    },
    usageIdentifierKey: usageIdentifierOf(key.keyId),
  };
}

/**
 * A Deny policy for every method of the API's stage: how the authorizer refuses a key it has read and found
 * invalid, so API Gateway answers with its ACCESS_DENIED response (401 "The API key is invalid") rather
 * than the UNAUTHORIZED one kept for a request without a key. Undefined when `methodArn` is malformed.
 */
export function denyPolicy(methodArn: string | undefined): APIGatewayAuthorizerResult | undefined {
  const stageArn = stageArnOf(methodArn ?? '');
  if (!stageArn) return undefined;
  return {
    principalId: 'invalid-api-key',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: `${stageArn}/*` }],
    },
  };
}

/** `arn:…:apiId/stage` of a method ARN, or undefined when it is not one. */
function stageArnOf(methodArn: string): string | undefined {
  const [apiArn, stage] = methodArn.split('/');
  return apiArn?.startsWith('arn:') && stage ? `${apiArn}/${stage}` : undefined;
}
