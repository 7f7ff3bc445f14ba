/**
 * The POST of a delivery at the moment it is sent: refused destinations are never contacted, a name is
 * resolved once and every address it resolves to checked, and the connection goes to the checked address
 * with the name kept for the Host header and TLS's server name. Servers listen on loopback, so the tests
 * that must reach them allow loopback; the names they use resolve only through the test's resolver.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  destinationPost,
  type Resolve,
  type ResolvedAddress,
} from '#lib/adapters/outbound-http/destination-post';
import { PUBLIC_DESTINATIONS } from '#lib/domain/destinations';

const LOOPBACK = { allowLoopback: true };

let server: Server;
let port: number;
const hits: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url === '/moved') res.writeHead(307, { Location: '/target' }).end();
      else if (req.url === '/silent') return;
      else res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  hits.length = 0;
});

/** A resolver that answers from `answers` (each call the next entry, the last one again) and counts calls. */
function resolver(...answers: ResolvedAddress[][]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    return answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
  };
  return Object.assign(resolve, { calls });
}

const at = (address: string): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 });

describe('the POST of a delivery, checked where it goes', () => {
  it('sends nothing to a loopback address unless the policy allows it', async () => {
    const refused = await destinationPost(PUBLIC_DESTINATIONS)(
      `http://127.0.0.1:${port}/in`,
      {},
      '{}',
      5_000,
    );
    expect(refused).toEqual({ refused: '127.0.0.1 is a loopback address' });
    expect(hits).toEqual([]);
    expect(await destinationPost(LOOPBACK)(`http://127.0.0.1:${port}/in`, {}, '{}', 5_000)).toBe(204);
    expect(hits).toHaveLength(1);
  });

  it.each([
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['https://10.0.0.1/', '10.0.0.1 is a private address'],
    [
      'https://[::ffff:127.0.0.1]/',
      '[::ffff:7f00:1] is an IPv4-mapped address of 127.0.0.1, a loopback address',
    ],
    ['https://2852039166/', '169.254.169.254 is a link-local address'],
    ['https://metadata/', 'metadata is a single-label name, which resolves only inside a network'],
  ])('refuses %s without resolving or connecting: %s', async (url, reason) => {
    const resolve = resolver([at('93.184.215.14')]);
    expect(await destinationPost(PUBLIC_DESTINATIONS, { resolve })(url, {}, '{}', 5_000)).toEqual({
      refused: reason,
    });
    expect(resolve.calls).toEqual([]);
  });

  it('resolves a name once and refuses when any of its addresses is not public, sending nothing', async () => {
    const resolve = resolver([at('93.184.215.14'), at('10.1.2.3')]);
    const post = destinationPost(LOOPBACK, { resolve });
    expect(await post(`http://hooks.example.test:${port}/in`, {}, '{}', 5_000)).toEqual({
      refused: 'hooks.example.test resolves to 10.1.2.3, a private address',
    });
    expect(resolve.calls).toEqual(['hooks.example.test']);
    expect(hits).toEqual([]);
  });

  it('refuses a name that resolves to the metadata service, in IPv6 forms too', async () => {
    for (const address of [
      '169.254.169.254',
      'fd00:ec2::254',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe',
    ]) {
      const post = destinationPost(PUBLIC_DESTINATIONS, { resolve: resolver([at(address)]) });
      const answer = await post('https://rebinding.example.com/in', {}, '{}', 5_000);
      expect(answer, address).toMatchObject({ refused: expect.stringContaining(`resolves to ${address}`) });
    }
  });

  it('connects to the address it checked, without a second lookup, keeping the name in the Host header', async () => {
    // A second lookup would get 127.0.0.2, where nothing listens: the request could not arrive.
    const resolve = resolver([at('127.0.0.1')], [at('127.0.0.2')]);
    const post = destinationPost(LOOPBACK, { resolve });
    const status = await post(
      `http://hooks.example.test:${port}/in?x=1`,
      { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
      '{"a":1}',
      5_000,
    );
    expect(status).toBe(204);
    expect(resolve.calls).toEqual(['hooks.example.test']);
    expect(hits).toEqual([
      {
        url: '/in?x=1',
        headers: expect.objectContaining({
          host: `hooks.example.test:${port}`,
          'content-type': 'application/json',
          'webhook-id': 'evt_1',
          'content-length': '7',
        }),
        body: '{"a":1}',
      },
    ]);
  });

  it('sends the name as TLS’s server name while connecting to the checked address', async () => {
    // A bare TCP server on loopback sees the TLS ClientHello, whose server name is in the clear.
    const hellos: Buffer[] = [];
    const tls: TcpServer = createTcpServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        hellos.push(chunk);
        socket.destroy();
      });
    });
    tls.listen(0, '127.0.0.1');
    await once(tls, 'listening');
    try {
      const tlsPort = (tls.address() as AddressInfo).port;
      const resolve = resolver([at('127.0.0.1')]);
      const answer = await destinationPost(LOOPBACK, { resolve })(
        `https://secure-hooks.example.test:${tlsPort}/in`,
        {},
        '{}',
        5_000,
      );
      // The handshake cannot complete here: no answer, a failed attempt.
      expect(answer).toBeUndefined();
      expect(hellos).toHaveLength(1);
      expect(hellos[0]?.includes('secure-hooks.example.test')).toBe(true);
    } finally {
      tls.close();
    }
  });

  it('takes a name that does not resolve as no answer: a failed attempt, retried later', async () => {
    const resolve: Resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(
      await destinationPost(PUBLIC_DESTINATIONS, { resolve })('https://gone.example.com/', {}, '{}', 5_000),
    ).toBe(undefined);
  });

  it('never follows a redirect: the 3xx is the attempt’s answer', async () => {
    expect(await destinationPost(LOOPBACK)(`http://127.0.0.1:${port}/moved`, {}, '{}', 5_000)).toBe(307);
    expect(hits.map((hit) => hit.url)).toEqual(['/moved']);
  });

  it('abandons an attempt that does not answer within its timeout', async () => {
    expect(await destinationPost(LOOPBACK)(`http://127.0.0.1:${port}/silent`, {}, '{}', 50)).toBeUndefined();
  });

  it('sends to an origin the policy trusts whatever its address (the local runtime’s own application)', async () => {
    const trusted = { allowLoopback: false, trustedOrigins: [`http://127.0.0.1:${port}`] };
    expect(await destinationPost(trusted)(`http://127.0.0.1:${port}/logout`, {}, '{}', 5_000)).toBe(204);
    expect(await destinationPost(trusted)(`http://127.0.0.1:${port + 1}/logout`, {}, '{}', 5_000)).toEqual({
      refused: '127.0.0.1 is a loopback address',
    });
  });
});
