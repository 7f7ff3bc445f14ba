// Stands in for @aws-sdk/lib-dynamodb (and, through sdk-wire-stub.mjs, @aws-sdk/client-dynamodb) in the "handler only" bundles
// (esbuild `alias`, see build.ts): `send` answers from the in-memory tables at once, so the warm cost of
// those bundles is the functions' own work (middy, validation, use case, rendering) without the SDK's
// per-request pipeline. Only what lib/dynamodb imports is provided; anything else fails the build.
import { ConditionalCheckFailed, execute } from './memory-tables.mjs';
import { plainInput, wireOutput } from './wire-values.mjs';

class Command {
  constructor(input) {
    this.input = input;
  }
}

export class GetCommand extends Command {}
export class BatchGetCommand extends Command {}
export class PutCommand extends Command {}
export class UpdateCommand extends Command {}
export class QueryCommand extends Command {}
// Imported by the adapters for operator commands (admin CLI); no request path sends them.
export class ScanCommand extends Command {}
export class DeleteCommand extends Command {}

/**
 * A command of @aws-sdk/client-dynamodb itself (sdk-wire-stub.mjs), sent through the document client
 * without its marshalling: its input and answer are in DynamoDB's own form.
 */
export class WireCommand extends Command {}
export class WireQueryCommand extends WireCommand {}

/** The DynamoDB operation of each command a request path sends. */
const OPERATIONS = new Map([
  [GetCommand, 'GetItem'],
  [BatchGetCommand, 'BatchGetItem'],
  [PutCommand, 'PutItem'],
  [UpdateCommand, 'UpdateItem'],
  [QueryCommand, 'Query'],
  [WireQueryCommand, 'Query'],
]);

/** Answers a command at `send`, from the in-memory tables, in the form the command was sent in. */
async function answer(command) {
  const operation = OPERATIONS.get(command.constructor);
  if (!operation) throw new Error(`sdk-stub: ${command.constructor.name} is not used on a request path`);
  try {
    if (command instanceof WireCommand) return wireOutput(execute(operation, plainInput(command.input)));
    return execute(operation, command.input);
  } catch (error) {
    // As the SDK's service exceptions carry it.
    if (error instanceof ConditionalCheckFailed) error.$metadata = { httpStatusCode: 400 };
    throw error;
  }
}

export class DynamoDBClient {
  constructor(config) {
    this.config = config;
  }

  /**
   * The middleware stack lib/dynamodb/client.ts adds its request deadline to and takes the SDK's logger
   * from: answered at `send`, no request ever goes through it, so a middleware is accepted and never run.
   */
  middlewareStack = {
    add() {},
    remove() {
      return true;
    },
  };

  /** The shard queries' client (createDynamoClients) sends commands in DynamoDB's own form. */
  async send(command) {
    if (!(command instanceof WireCommand))
      throw new Error('sdk-stub: the plain client sends wire commands only');
    return answer(command);
  }
}

export class DynamoDBDocumentClient {
  static from(client) {
    return new DynamoDBDocumentClient(client);
  }

  constructor(client) {
    this.client = client;
  }

  send(command) {
    return answer(command);
  }
}
