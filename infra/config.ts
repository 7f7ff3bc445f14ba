import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_FRAME_ANCESTORS, METADATA_MAX_BYTES_CEILING } from '#lib/platform/config';
import { LOG_LEVELS, type LogLevel } from '#lib/platform/logger';
import { integerRangeProblem, isFrameAncestorSource, parseBaseUrl, parseUrl } from '#lib/platform/values';

/** Raised while reading CDK context; its message lists every invalid value so one synth shows them all. */
export class InfraConfigError extends Error {
  override readonly name = 'InfraConfigError';
}

export interface CustomDomainConfig {
  domainName: string;
  /** ACM certificate in the stack's region (the API endpoint is regional). */
  certificateArn: string;
}

/** The validated deployment settings of one stage. */
export interface InfraConfig {
  stageName: string;
  throttleRateLimit: number;
  throttleBurstLimit: number;
  /** Also the delay before a revoked API key stops working. */
  authorizerCacheTtlSeconds: number;
  logRetentionDays: RetentionDays;
  logLevel: LogLevel;
  /** Base URL of embed links; set from `publicBaseUrl`, else from the custom domain, else undefined. */
  publicBaseUrl: string | undefined;
  customDomain: CustomDomainConfig | undefined;
  /** Origins that may frame the embed page (its CSP frame-ancestors); empty keeps the page's default. */
  allowedEmbedOrigins: string[];
  /** The resulting CSP `frame-ancestors` sources, also sent on the errors API Gateway makes itself. */
  frameAncestors: string;
  alarmEmail: string | undefined;
  metadataMaxBytes: number | undefined;
}

/** Defaults for every optional context key; cdk.json repeats them so they are visible to operators. */
export const CONTEXT_DEFAULTS = {
  stageName: 'prod',
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
  authorizerCacheTtlSeconds: 300,
  logRetentionDays: RetentionDays.ONE_MONTH,
  logLevel: 'info',
  allowedEmbedOrigins: [] as string[],
} as const;

/** The CDK context keys this stack reads. */
export const CONTEXT_KEYS = [
  'stageName',
  'throttleRateLimit',
  'throttleBurstLimit',
  'authorizerCacheTtlSeconds',
  'logRetentionDays',
  'logLevel',
  'publicBaseUrl',
  'customDomainName',
  'certificateArn',
  'allowedEmbedOrigins',
  'alarmEmail',
  'metadataMaxBytes',
] as const;

export type ContextKey = (typeof CONTEXT_KEYS)[number];
export type ContextReader = (key: ContextKey) => unknown;

const RETENTION_VALUES = new Set(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);
/** API Gateway's default account-level limits per region; a stage cannot usefully exceed them. */
const MAX_THROTTLE_RATE = 10_000;
const MAX_THROTTLE_BURST = 5_000;
const STAGE_NAME = /^[A-Za-z][A-Za-z0-9-]{0,31}$/;
const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Reads and validates the stack's CDK context. Values given with `-c key=value` arrive as strings and
 * values from cdk.json keep their JSON type, so both forms are accepted. Throws `InfraConfigError`.
 */
export function readInfraConfig(context: ContextReader): InfraConfig {
  const problems: string[] = [];
  const read = (key: ContextKey): unknown => {
    const value = context(key);
    return typeof value === 'string' ? value.trim() : value;
  };

  const stageName = readString(read('stageName'), CONTEXT_DEFAULTS.stageName);
  if (!STAGE_NAME.test(stageName)) {
    problems.push(
      `stageName must start with a letter and hold only letters, digits and hyphens (at most 32), got "${stageName}"`,
    );
  }

  const throttleRateLimit = readNumber(read('throttleRateLimit'), CONTEXT_DEFAULTS.throttleRateLimit);
  if (!(throttleRateLimit > 0 && throttleRateLimit <= MAX_THROTTLE_RATE)) {
    problems.push(
      `throttleRateLimit must be a positive number of requests per second, at most ${MAX_THROTTLE_RATE}, got "${show(read('throttleRateLimit'))}"`,
    );
  }
  const throttleBurstLimit = readNumber(read('throttleBurstLimit'), CONTEXT_DEFAULTS.throttleBurstLimit);
  checkInteger(
    'throttleBurstLimit',
    throttleBurstLimit,
    1,
    MAX_THROTTLE_BURST,
    read('throttleBurstLimit'),
    problems,
  );

  const authorizerCacheTtlSeconds = readNumber(
    read('authorizerCacheTtlSeconds'),
    CONTEXT_DEFAULTS.authorizerCacheTtlSeconds,
  );
  checkInteger(
    'authorizerCacheTtlSeconds',
    authorizerCacheTtlSeconds,
    0,
    3600,
    read('authorizerCacheTtlSeconds'),
    problems,
  );

  const logRetentionDays = readNumber(read('logRetentionDays'), CONTEXT_DEFAULTS.logRetentionDays);
  if (!RETENTION_VALUES.has(logRetentionDays)) {
    problems.push(
      `logRetentionDays must be one of ${[...RETENTION_VALUES].join(', ')} (CloudWatch Logs retention values), ` +
        `got "${show(read('logRetentionDays'))}"`,
    );
  }

  const logLevel = readString(read('logLevel'), CONTEXT_DEFAULTS.logLevel).toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`logLevel must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  const customDomain = readCustomDomain(read('customDomainName'), read('certificateArn'), problems);

  let publicBaseUrl = readOptionalString(read('publicBaseUrl'));
  if (publicBaseUrl !== undefined) {
    publicBaseUrl = validateBaseUrl(publicBaseUrl, problems);
  } else if (customDomain) {
    publicBaseUrl = `https://${customDomain.domainName}`;
  }

  const allowedEmbedOrigins = readList(read('allowedEmbedOrigins'), problems);
  for (const origin of allowedEmbedOrigins) {
    // Both rules: an origin as this stack means it, and a source the embed function accepts at start-up.
    if (!isOrigin(origin) || !isFrameAncestorSource(origin)) {
      problems.push(
        `allowedEmbedOrigins entries must be origins like "https://app.example.com", got "${origin}"`,
      );
    }
  }

  const alarmEmail = readOptionalString(read('alarmEmail'));
  if (alarmEmail !== undefined && !EMAIL.test(alarmEmail)) {
    problems.push(`alarmEmail must be an e-mail address, got "${alarmEmail}"`);
  }

  const rawMetadataMaxBytes = read('metadataMaxBytes');
  let metadataMaxBytes: number | undefined;
  if (rawMetadataMaxBytes !== undefined && rawMetadataMaxBytes !== null && rawMetadataMaxBytes !== '') {
    metadataMaxBytes = readNumber(rawMetadataMaxBytes, Number.NaN);
    checkInteger(
      'metadataMaxBytes',
      metadataMaxBytes,
      1,
      METADATA_MAX_BYTES_CEILING,
      rawMetadataMaxBytes,
      problems,
    );
  }

  if (problems.length > 0) throw new InfraConfigError(`Invalid CDK context: ${problems.join('; ')}`);
  return {
    stageName,
    throttleRateLimit,
    throttleBurstLimit,
    authorizerCacheTtlSeconds,
    logRetentionDays: logRetentionDays as RetentionDays,
    logLevel,
    publicBaseUrl,
    customDomain,
    allowedEmbedOrigins,
    frameAncestors: allowedEmbedOrigins.length > 0 ? allowedEmbedOrigins.join(' ') : DEFAULT_FRAME_ANCESTORS,
    alarmEmail,
    metadataMaxBytes,
  };
}

function readCustomDomain(
  rawDomain: unknown,
  rawArn: unknown,
  problems: string[],
): CustomDomainConfig | undefined {
  const domainName = readOptionalString(rawDomain)?.toLowerCase();
  const certificateArn = readOptionalString(rawArn);
  if (domainName === undefined && certificateArn === undefined) return undefined;
  if (domainName === undefined || certificateArn === undefined) {
    problems.push('customDomainName and certificateArn must be given together');
    return undefined;
  }
  if (!DOMAIN_NAME.test(domainName))
    problems.push(`customDomainName must be a DNS name, got "${domainName}"`);
  if (!CERTIFICATE_ARN.test(certificateArn)) {
    problems.push(`certificateArn must be an ACM certificate ARN, got "${certificateArn}"`);
  }
  return { domainName, certificateArn };
}

/**
 * The create-session function's own rules for PUBLIC_BASE_URL (so a value synth accepts never fails the
 * function at start-up), and https on top: in AWS, embed URLs carry the token over the internet.
 */
function validateBaseUrl(value: string, problems: string[]): string | undefined {
  const url = parseBaseUrl('publicBaseUrl', value, problems);
  if (url !== undefined && new URL(url).protocol !== 'https:') {
    problems.push(`publicBaseUrl must use https (embed links carry a token), got "${value}"`);
  }
  return url;
}

function isOrigin(value: string): boolean {
  const url = parseUrl(value);
  if (url === undefined) return false;
  const local = url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1');
  return (url.protocol === 'https:' || local) && url.origin === value;
}

function checkInteger(
  name: string,
  value: number,
  min: number,
  max: number,
  raw: unknown,
  problems: string[],
): void {
  const problem = integerRangeProblem(name, value, min, max, show(raw));
  if (problem !== undefined) problems.push(problem);
}

function readString(value: unknown, fallback: string): string {
  if (value === undefined || value === null || value === '') return fallback;
  return typeof value === 'string' ? value : String(value);
}

function readOptionalString(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return typeof value === 'string' ? value : String(value);
}

/** A number from JSON or from a `-c` string; anything else becomes NaN so the caller reports it. */
function readNumber(value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return Number.NaN;
}

/** A list from a JSON array, a JSON array string or a comma-separated string. */
function readList(value: unknown, problems: string[]): string[] {
  if (value === undefined || value === null || value === '') return [...CONTEXT_DEFAULTS.allowedEmbedOrigins];
  let items: unknown = value;
  if (typeof value === 'string') {
    if (value.startsWith('[')) {
      try {
        items = JSON.parse(value);
      } catch {
        problems.push(`allowedEmbedOrigins is not a valid JSON array: ${value}`);
        return [];
      }
    } else {
      items = value.split(',');
    }
  }
  if (!Array.isArray(items) || !items.every((item) => typeof item === 'string')) {
    problems.push(`allowedEmbedOrigins must be a list of origins, got ${show(value)}`);
    return [];
  }
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
