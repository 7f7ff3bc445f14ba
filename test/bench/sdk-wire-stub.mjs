// Stands in for @aws-sdk/client-dynamodb in the "handler only" bundles (build.ts): the client the
// document client wraps, and the commands an adapter sends in DynamoDB's own form (revoke-all's count
// reads index entries so), which sdk-stub.mjs's document client answers in that form.
export { DynamoDBClient, WireQueryCommand as QueryCommand } from './sdk-stub.mjs';
