// Stands in for @aws-sdk/client-dynamodb and @aws-sdk/lib-dynamodb in the "handler only" bundles
// (esbuild `alias`, see build.ts): `send` answers from the in-memory tables at once, so the warm cost of
// those bundles is the functions' own work (middy, validation, use case, rendering) without the SDK's
// per-request pipeline. Only what lib/dynamodb imports is provided; anything else fails the build.
import { ConditionalCheckFailed, getItem, putItem, query } from './memory-tables.mjs';

class Command {
  constructor(input) {
    this.input = input;
  }
}

export class GetCommand extends Command {}
export class PutCommand extends Command {}
export class QueryCommand extends Command {}
export class ScanCommand extends Command {}
export class UpdateCommand extends Command {}
export class DeleteCommand extends Command {}

export class DynamoDBClient {
  constructor(config) {
    this.config = config;
  }
}

export class DynamoDBDocumentClient {
  static from(client) {
    return new DynamoDBDocumentClient(client);
  }

  constructor(client) {
    this.client = client;
  }

  async send(command) {
    const input = command.input;
    if (command instanceof GetCommand) {
      const item = getItem(input.TableName, input.Key, input.ProjectionExpression);
      return item ? { Item: { ...item } } : {};
    }
    if (command instanceof PutCommand) {
      try {
        putItem(input.TableName, { ...input.Item }, input.ConditionExpression);
      } catch (error) {
        if (error instanceof ConditionalCheckFailed) error.$metadata = { httpStatusCode: 400 };
        throw error;
      }
      return {};
    }
    if (command instanceof QueryCommand) {
      const items = query(
        input.TableName,
        input.KeyConditionExpression,
        input.ExpressionAttributeValues,
        input.Limit,
      );
      return { Items: items.map((item) => ({ ...item })), Count: items.length };
    }
    throw new Error(`sdk-stub: ${command.constructor.name} is not used on a request path`);
  }
}
