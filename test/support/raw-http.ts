import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `request` byte for byte (fetch and node:http would refuse or normalise what these tests need to
 * send: a lowercase method, a control character in a header, a path such as `//[`) and reads the answer
 * until the server closes the connection. Ask for `Connection: close` in the request, or the server keeps
 * the connection open and this waits for `timeoutMs`.
 */
export function rawRequest(
  host: string,
  port: number,
  request: string | Buffer,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close while the request is still being written (a header too large): not a failure.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') {
        clearTimeout(timer);
        reject(error);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.write(request);
  });
}

/** A GET of `target` written as is, asking the server to close the connection after answering. */
export function rawGet(host: string, port: number, target: string): Promise<RawResponse> {
  return rawRequest(host, port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
}

function parseResponse(bytes: Buffer): RawResponse {
  const headerEnd = bytes.indexOf('\r\n\r\n');
  const head = bytes.subarray(0, headerEnd === -1 ? bytes.length : headerEnd).toString('latin1');
  if (!head.startsWith('HTTP/1.1 ') || headerEnd === -1) {
    throw new Error(`not an HTTP response: ${JSON.stringify(head.slice(0, 200))}`);
  }
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const raw = bytes.subarray(headerEnd + 4);
  const body = headers['transfer-encoding'] === 'chunked' ? dechunk(raw) : raw;
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
}

/** The payload of a chunked body: sizes in hex, each chunk followed by CRLF, ending with a 0 chunk. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let rest = raw;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
    rest = rest.subarray(lineEnd + 2 + size + 2);
  }
}
