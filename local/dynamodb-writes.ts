import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** The keys of a table's items written since the last `take()`. */
export interface WrittenItems {
  take(): Set<string>;
}

/** The DynamoDB actions that write items (dynalite has no transactions). */
const WRITE_ACTIONS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

type AttributeMap = Record<string, { S?: string } | undefined>;

interface WriteRequest {
  TableName?: string;
  Item?: AttributeMap;
  Key?: AttributeMap;
  RequestItems?: Record<
    string,
    { PutRequest?: { Item?: AttributeMap }; DeleteRequest?: { Key?: AttributeMap } }[]
  >;
}

/**
 * Notes which items of `table` the embedded DynamoDB's requests write, by their string partition key
 * `keyName`. Every write reaches the embedded DynamoDB as an HTTP request, whoever sends it (the runtime,
 * the admin CLI, a test's own client), so the notes miss none. A key is noted when dynalite ends its
 * answer, which it does once the write is applied: an item read after `take()` shows every write noted
 * up to then, and a write answered later is in the next `take()`. The answer's end, not the connection's
 * close: a client that gave up on its attempt closes the connection before dynalite applies the write,
 * and the write still lands. A write refused (a failed condition) is noted too; reading it again finds
 * it unchanged.
 */
export function watchWrites(server: Server, table: string, keyName: string): WrittenItems {
  let written = new Set<string>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const action = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    if (!WRITE_ACTIONS.has(action)) return;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    response.end = ((...args: unknown[]) => {
      for (const key of keysWritten(parsed(chunks), table, keyName)) written.add(key);
      return end(...args);
    }) as ServerResponse['end'];
  });
  return {
    take() {
      const taken = written;
      written = new Set();
      return taken;
    },
  };
}

function parsed(chunks: Buffer[]): WriteRequest {
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as WriteRequest;
  } catch {
    // dynalite refuses a body that is not JSON, and writes nothing.
    return {};
  }
}

/** The keys of the items of `table` a write request names. */
function keysWritten(request: WriteRequest, table: string, keyName: string): string[] {
  const items: (AttributeMap | undefined)[] = [];
  if (request.TableName === table) items.push(request.Item ?? request.Key);
  for (const write of request.RequestItems?.[table] ?? [])
    items.push(write.PutRequest?.Item ?? write.DeleteRequest?.Key);
  return items.flatMap((item) => {
    const key = item?.[keyName]?.S;
    return key === undefined ? [] : [key];
  });
}
