import {
  ConditionalCheckFailedException,
  InternalServerError,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';

const metadata = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });

/** Errors as the SDK raises them once its retries are spent. */
export const dynamoErrors = {
  throttled: () =>
    new ProvisionedThroughputExceededException({
      message: 'The level of configured provisioned throughput for the table was exceeded',
      ...metadata(400),
    }),
  throttling: () =>
    Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', ...metadata(400) }),
  internal: () => new InternalServerError({ message: 'Internal server error', ...metadata(500) }),
  http503: () => Object.assign(new Error('Service Unavailable'), { name: 'UnknownError', ...metadata(503) }),
  connectionRefused: () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { name: 'Error', code: 'ECONNREFUSED' }),
  timeout: () => Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError' }),
  conditionFailed: () =>
    new ConditionalCheckFailedException({ message: 'The conditional request failed', ...metadata(400) }),
  validation: () =>
    Object.assign(new Error('One or more parameter values were invalid: internal detail'), {
      name: 'ValidationException',
      ...metadata(400),
    }),
  accessDenied: () =>
    Object.assign(new Error('User is not authorized to perform: dynamodb:GetItem'), {
      name: 'AccessDeniedException',
      ...metadata(400),
    }),
};
