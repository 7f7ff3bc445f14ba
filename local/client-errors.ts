import type { Duplex } from 'node:stream';
import { API_HEADERS } from '#lib/adapters/http/response';
import { errorBody, statusName } from '#lib/adapters/http/status';

/** Statuses Node itself would send for these parser errors; anything else is a 400. */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

const MESSAGES: Readonly<Record<number, string>> = {
  400: 'The request is not valid HTTP',
  408: 'The request took too long to arrive',
  413: 'The request is larger than the service accepts',
  431: 'The request headers are larger than the service accepts',
};

/** How long a refused client may keep sending before its connection is cut. */
const LINGER_MS = 1_000;

/**
 * A `clientError` listener for the local runtime's HTTP server: requests Node's parser refuses (a header
 * too large, a control character in a header, a lowercase method) get the house JSON error and headers
 * rather than Node's empty body. Like Node, it answers only on a connection that has not answered
 * anything yet, so it never writes into the middle of another response.
 */
export function clientErrorResponder(
  securityHeaders: Readonly<Record<string, string>>,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  const answered = new WeakSet<Duplex>();
  return (error, socket) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const bytesWritten = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (error.code === 'ECONNRESET' || !socket.writable || bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const status = STATUS_BY_CODE[error.code ?? ''] ?? 400;
    const body = JSON.stringify(errorBody(status, MESSAGES[status] ?? MESSAGES[400] ?? ''));
    const headers = {
      ...API_HEADERS,
      ...securityHeaders,
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    };
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(`HTTP/1.1 ${status} ${statusName(status)}\r\n${head.join('')}\r\n${body}`);
    // Read and drop what the client is still sending (the rest of a huge header): closing with unread
    // data would reset the connection and could lose the answer before the client reads it.
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
