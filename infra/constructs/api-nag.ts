import { Validations } from 'aws-cdk-lib';
import type { Method, RestApi } from 'aws-cdk-lib/aws-apigateway';

/** The cdk-nag findings the REST API has on purpose, each with its reason. */
export function acknowledgeApiFindings(restApi: RestApi): void {
  // Acknowledged on the RestApi, so they cover its methods, stage and logging role.
  Validations.of(restApi).acknowledge(
    {
      id: 'AwsSolutions-APIG2',
      reason:
        'The functions validate bodies and answer 400 with a message naming the problem (spec); ' +
        'gateway model validation would duplicate the schema and replace that message with a generic one.',
    },
    {
      id: 'AwsSolutions-APIG6',
      reason:
        'Execution logging is off on purpose: it records headers and query strings, where API keys and ' +
        'embed session tokens travel. JSON access logs, Lambda logs and stage metrics cover operations.',
    },
    {
      id: 'AwsSolutions-COG4',
      reason:
        'Callers are SaaS backends authenticated by API key through the Lambda TOKEN authorizer, not ' +
        'end users of a Cognito user pool; the remaining methods are unauthenticated by design (APIG4).',
    },
    {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-level API Gateway logging role uses the AWS-maintained AmazonAPIGatewayPushToCloudWatchLogs ' +
        'policy, which exists for exactly this role and is required for access logging.',
    },
  );
}

/** Acknowledges that `method` has no authorizer, saying why. */
export function acknowledgeNoAuth(method: Method, why: string): void {
  Validations.of(method).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason: `No authorizer by design: ${why}.`,
  });
}
