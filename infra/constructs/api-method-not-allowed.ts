import {
  AuthorizationType,
  MockIntegration,
  PassthroughBehavior,
  type Resource,
} from 'aws-cdk-lib/aws-apigateway';
import { methodNotAllowed } from '#lib/adapters/http/gateway-responses';
import { REQUEST_ID_HEADER } from '#lib/adapters/http/request-id';
import { jsonTemplate, quoted } from './api-mapping';
import { acknowledgeNoAuth } from './api-nag';

/** Content types answered with a mapped 405; others still get the default integration response. */
const MOCK_REQUEST_CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
  'application/xml',
  'text/xml',
  'application/octet-stream',
];

/**
 * `ANY` on the resource answers every method but `allowedMethods` with 405; API Gateway prefers the
 * specific methods over ANY. The integration response has no selection pattern, so it is the default one
 * and turns whatever the mock returns (even for an unexpected content type) into the 405.
 */
export function addMethodNotAllowed(
  resource: Resource,
  allowedMethods: readonly string[],
  securityHeaders: Record<string, string>,
): void {
  const response = methodNotAllowed(allowedMethods, securityHeaders);
  // Static headers, and API Gateway's request id as every other answer carries it.
  const mapped = { ...quoted(response.headers), [REQUEST_ID_HEADER]: 'context.requestId' };
  const headerNames = Object.keys(mapped).map((name) => `method.response.header.${name}`);
  const integration = new MockIntegration({
    passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
    requestTemplates: Object.fromEntries(
      MOCK_REQUEST_CONTENT_TYPES.map((type) => [type, '{"statusCode": 405}']),
    ),
    integrationResponses: [
      {
        statusCode: '405',
        responseTemplates: { 'application/json': jsonTemplate(JSON.parse(response.body)) },
        responseParameters: Object.fromEntries(
          Object.entries(mapped).map(([name, value]) => [`method.response.header.${name}`, value]),
        ),
      },
    ],
  });
  const method = resource.addMethod('ANY', integration, {
    authorizationType: AuthorizationType.NONE,
    methodResponses: [
      {
        statusCode: '405',
        responseParameters: Object.fromEntries(headerNames.map((name) => [name, true])),
      },
    ],
  });
  acknowledgeNoAuth(method, 'answers 405 from a mock integration and reaches no backend');
}
