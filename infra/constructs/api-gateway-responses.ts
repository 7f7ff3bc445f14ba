import { ResponseType, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  GATEWAY_RESPONSES,
  type GatewayResponseType,
  gatewayResponse,
} from '#lib/adapters/http/gateway-responses';
import { REQUEST_ID_HEADER } from '#lib/adapters/http/request-id';
import { jsonTemplate, quoted } from './api-mapping';

/** Every error API Gateway makes itself, in the house shape and with the given security headers. */
export function addGatewayResponses(restApi: RestApi, securityHeaders: Record<string, string>): void {
  for (const type of Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]) {
    const response = gatewayResponse(type, securityHeaders);
    restApi.addGatewayResponse(type, {
      type: ResponseType.of(type),
      statusCode: String(response.status),
      // API Gateway's request id, as the functions send it: every answer names its request.
      responseHeaders: { ...quoted(response.headers), [REQUEST_ID_HEADER]: 'context.requestId' },
      templates: { 'application/json': jsonTemplate(JSON.parse(response.body)) },
    });
  }
}
