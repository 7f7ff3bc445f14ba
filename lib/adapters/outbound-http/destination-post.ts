/**
 * The POST of every webhook delivery and back-channel logout, checked where it goes at the moment it goes:
 * the URL's host is judged again, its name resolved once, every address it resolves to checked, and the
 * connection made to the address that was checked (the request's `lookup` answers it, so no second DNS
 * answer can differ: a name rebinding to 169.254.169.254 between check and connect is never reached).
 * The TLS server name and the Host header stay the URL's name, so the certificate is verified as usual.
 * Redirects are never followed; the answer's body is discarded.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  addressRefusal,
  type DestinationPolicy,
  destinationRefusal,
  isTrustedOrigin,
  parseIpv4,
  parseIpv6,
} from '#lib/domain/destinations';
import type { HttpPost } from '#lib/use-cases/webhook-delivery';

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name (the system resolver's, as Node's `http` would ask it). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

export interface DestinationPostOptions {
  /** How names are resolved (the system resolver unless a test gives its own). */
  resolve?: Resolve;
  /** Certificate authorities to trust beside the system's (tests only). */
  ca?: string;
}

/**
 * An HttpPost that sends only where `policy` allows: a refused URL or address answers `{refused}` and
 * nothing is sent; a name that does not resolve, like a connection that fails, is no answer (undefined:
 * a failed attempt, retried on the schedule).
 */
export function destinationPost(policy: DestinationPolicy, options: DestinationPostOptions = {}): HttpPost {
  const resolve = options.resolve ?? systemResolve;
  return async (target, headers, body, timeoutMs) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { refused: 'not an absolute URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return { refused: `${url.protocol} is not http(s)` };
    const refused = destinationRefusal(url, policy);
    if (refused !== undefined) return { refused };
    const signal = AbortSignal.timeout(timeoutMs);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let pinned: ResolvedAddress | undefined;
    if (parseIpv4(host) === undefined && parseIpv6(host) === undefined) {
      let addresses: ResolvedAddress[];
      try {
        addresses = await abortable(resolve(host), signal);
      } catch {
        return undefined;
      }
      if (addresses.length === 0) return undefined;
      if (!isTrustedOrigin(url, policy)) {
        for (const { address } of addresses) {
          const reason = addressRefusal(address, policy);
          if (reason !== undefined) return { refused: `${url.hostname} resolves to ${address}, ${reason}` };
        }
      }
      pinned = addresses[0];
    }
    return send(url, pinned, headers, body, signal, options.ca);
  };
}

/** `promise`, or a rejection once `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}

/** A `lookup` that answers the one address already checked, in the form the caller asks for. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as (error: null, addresses: ResolvedAddress[]) => void)(null, [pinned]);
    } else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

/** The POST itself: a fresh connection (no pooled socket to another address), to `pinned` when given. */
function send(
  url: URL,
  pinned: ResolvedAddress | undefined,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  ca: string | undefined,
): Promise<number | undefined> {
  const payload = Buffer.from(body, 'utf8');
  const requestOptions: RequestOptions & { ca?: string } = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(payload.length) },
    agent: false,
    signal,
    ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
    ...(ca ? { ca } : {}),
  };
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      requestOptions,
      (response) => {
        response.resume();
        response.on('error', () => undefined);
        resolve(response.statusCode);
      },
    );
    request.on('error', () => resolve(undefined));
    request.end(payload);
  });
}
