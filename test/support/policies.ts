/** The whole stage of METHOD_ARN (test/support/events.ts): every method and path, as a policy names it. */
export const STAGE_RESOURCE = 'arn:aws:execute-api:us-east-1:123456789012:abc123def4/prod/*';

/** The policy document of an authorizer's answer: `effect` on invoking every method and path of a stage. */
export function stagePolicyDocument(effect: 'Allow' | 'Deny', resource = STAGE_RESOURCE) {
  return {
    Version: '2012-10-17',
    Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
  };
}
