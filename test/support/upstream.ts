import { type IncomingMessage, request, type ServerResponse } from 'node:http';

/** An upstream answer, read whole. */
export interface UpstreamAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Every byte of a stream (a request or an answer). */
export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends a request a proxy received (its body read already) on to `target`; answers what came back. */
export function forwardTo(target: URL, req: IncomingMessage, body: Buffer): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (res) => {
        readAll(res).then(
          (payload) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: payload }),
          reject,
        );
      },
    );
    forwarded.on('error', reject);
    forwarded.end(body);
  });
}

/** Answers a proxied request with an upstream answer read whole (its length set, no chunked encoding). */
export function sendAnswer(res: ServerResponse, answer: UpstreamAnswer): void {
  const headers = { ...answer.headers };
  delete headers['transfer-encoding'];
  headers['content-length'] = String(answer.body.length);
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}
