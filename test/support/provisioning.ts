import { SignatureV4 } from '@smithy/signature-v4';
import type { LocalProvisioningCredentials, LocalRuntime } from '#local/runtime';
import { Sha256 } from '#local/sigv4';
import { type CallResult, call } from './local-runtime';

/** The request a provisioning call sends, signed as an AWS SDK signs it (service `execute-api`). */
export async function signedRequest(
  url: URL,
  init: { method: string; body?: string; headers?: Record<string, string> },
  credentials: Pick<LocalProvisioningCredentials, 'accessKeyId' | 'secretAccessKey' | 'region'>,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: 'execute-api',
    region: credentials.region,
    sha256: Sha256,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
  });
  const signed = await signer.sign({
    method: init.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { host: url.host, ...(init.headers ?? {}) },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const { host: _host, ...headers } = signed.headers;
  return headers;
}

/**
 * One call of a provisioning route, signed with the runtime's provisioning credentials (or `credentials`);
 * a body object is sent as JSON.
 */
export async function provisioningCall(
  runtime: LocalRuntime,
  method: string,
  path: string,
  body?: unknown,
  credentials: Pick<
    LocalProvisioningCredentials,
    'accessKeyId' | 'secretAccessKey' | 'region'
  > = runtime.provisioning,
): Promise<CallResult> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers = await signedRequest(
    new URL(`${runtime.baseUrl}${path}`),
    {
      method,
      ...(text !== undefined ? { body: text, headers: { 'content-type': 'application/json' } } : {}),
    },
    credentials,
  );
  return call(runtime, path, { method, headers, ...(text !== undefined ? { body: text } : {}) });
}
