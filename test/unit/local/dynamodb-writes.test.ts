import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { watchWrites } from '#local/dynamodb-writes';

/** A server that emits one request to its listeners, as dynalite's would, and the answer to end. */
function oneWrite(target: string, body: unknown) {
  const server = new EventEmitter();
  const written = watchWrites(server as unknown as Server, 'sessions', 'id');
  const request = Object.assign(new EventEmitter(), { headers: { 'x-amz-target': target } });
  const response = Object.assign(new EventEmitter(), { end: () => response });
  server.emit('request', request as unknown as IncomingMessage, response as unknown as ServerResponse);
  request.emit('data', Buffer.from(JSON.stringify(body)));
  request.emit('end');
  return { written, response };
}

describe('the notes of written items', () => {
  it('note a write when dynalite ends its answer, even after its client closed the connection', () => {
    const { written, response } = oneWrite('DynamoDB_20120810.PutItem', {
      TableName: 'sessions',
      Item: { id: { S: 'late' } },
    });
    // The client gave up on its attempt: the write is not applied yet, and lands after.
    response.emit('close');
    expect(written.take().size).toBe(0);
    response.end();
    expect([...written.take()]).toEqual(['late']);
  });

  it('note nothing for a read', () => {
    const { written, response } = oneWrite('DynamoDB_20120810.GetItem', {
      TableName: 'sessions',
      Key: { id: { S: 'read' } },
    });
    response.end();
    expect(written.take().size).toBe(0);
  });
});
