import { createServer, type IncomingMessage } from 'node:http';
import { listenOnFreePort } from './listen';
import { forwardTo, readAll } from './upstream';

/**
 * A proxy in front of a DynamoDB endpoint whose indexes lag as DynamoDB's global secondary indexes may:
 * a Query of one of `indexes` does not see the items created in the last `lagMs` (by their `createdKey`,
 * `createdAt#id`). Everything else is forwarded untouched, so the table itself stays strongly consistent.
 */
export async function startLaggingIndexProxy(
  upstream: string,
  options: { indexes: readonly string[]; lagMs: number },
): Promise<{ endpoint: string; hidden: () => number; close(): Promise<void> }> {
  const target = new URL(upstream);
  const lagging = new Set(options.indexes);
  let hidden = 0;
  const server = createServer((req, res) => {
    handle(req).then(
      ({ status, headers, body }) => {
        const out = { ...headers, 'content-length': String(body.length) };
        delete out['transfer-encoding'];
        res.writeHead(status, out);
        res.end(body);
      },
      () => res.destroy(),
    );
  });

  async function handle(req: IncomingMessage) {
    const body = await readAll(req);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const answer = await forwardTo(target, req, body);
    if (operation !== 'Query' || answer.status !== 200) return answer;
    const input = JSON.parse(body.toString('utf8')) as { IndexName?: string };
    if (input.IndexName === undefined || !lagging.has(input.IndexName)) return answer;
    const output = JSON.parse(answer.body.toString('utf8')) as {
      Items?: Array<{ createdKey?: { S?: string } }>;
      Count?: number;
    };
    const now = Date.now();
    const visible = (output.Items ?? []).filter((item) => {
      const createdAt = Date.parse(String(item.createdKey?.S ?? '').split('#')[0] ?? '');
      return Number.isNaN(createdAt) || now - createdAt >= options.lagMs;
    });
    hidden += (output.Items?.length ?? 0) - visible.length;
    const rewritten = Buffer.from(JSON.stringify({ ...output, Items: visible, Count: visible.length }));
    return { ...answer, body: rewritten };
  }

  const { endpoint, close } = await listenOnFreePort(server);
  return { endpoint, hidden: () => hidden, close };
}
