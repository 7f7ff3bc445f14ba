import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DEFAULT_API_KEY_LIMITS,
  EMBED_PAGE_CLIENT_LIMIT,
  WAF_RATE_LIMIT_BOUNDS,
} from '#lib/definitions/rate-limits';
import { RATE_LIMIT_BOUNDS } from '#lib/domain/api-key';
import { boardAppUrlProblem } from '#lib/domain/board-app';
import { isEmbedOrigin } from '#lib/domain/embed-origins';
import {
  DEFAULT_FRAME_ANCESTORS,
  METADATA_CEILING_REASON,
  METADATA_MAX_BYTES_CEILING,
} from '#lib/platform/config';
import { LOG_LEVELS, type LogLevel } from '#lib/platform/logger';
import { integerRangeProblem, parseBaseUrl } from '#lib/platform/values';
import { type DeployedIndexes, deployedIndexesProblem } from './indexes';

/** Raised while reading CDK context; its message lists every invalid value so one synth shows them all. */
export class InfraConfigError extends Error {
  override readonly name = 'InfraConfigError';
}

/** What a check may look at besides the value: its key, the value as given, and every key's value. */
interface CheckContext {
  key: string;
  raw: unknown;
  values: Readonly<Record<string, unknown>>;
}

/** One CDK context key: how a given value is read, the value when none is given, and its rules. */
interface ContextSetting<T, D> {
  /**
   * Reads a given value: JSON from cdk.json, or a trimmed non-empty string from `-c key=value`. What
   * cannot be read at all goes to `problems`.
   */
  parse(raw: unknown, problems: string[]): T;
  default: D;
  // Method syntax, unlike a function property, lets every setting stand in as ContextSetting<unknown>.
  /** The problems of a given value (never of the default); runs once every key is read. */
  check?(value: T, context: CheckContext): string | string[] | undefined;
}

type AnySetting = ContextSetting<unknown, unknown>;

/** Infers a setting's types; `D` is checked against the parsed type so a default cannot widen it. */
function setting<T, D extends T | undefined>(definition: ContextSetting<T, D>): ContextSetting<T, D> {
  return definition;
}

/** An integer setting from `min` to `max`; a decimal or negative value is read so it can be reported. */
function integerSetting<D extends number | undefined>(
  min: number,
  max: number,
  fallback: D,
): ContextSetting<number, D> {
  return {
    parse: readNumber,
    default: fallback,
    check: (value, { key, raw }) => integerRangeProblem(key, value, min, max, show(raw)),
  };
}

/** A yes/no setting: JSON `true`/`false` from cdk.json, or the words from `-c key=value`. */
function booleanSetting(fallback: boolean): ContextSetting<boolean, boolean> {
  return {
    parse: (raw) =>
      (raw === true || raw === 'true'
        ? true
        : raw === false || raw === 'false'
          ? false
          : Number.NaN) as boolean,
    default: fallback,
    check: (value, { key, raw }) =>
      typeof value === 'boolean' ? undefined : `${key} must be true or false, got "${show(raw)}"`,
  };
}

const RETENTION_VALUES = new Set(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);
/** API Gateway's default account-level limits per region; a stage cannot usefully exceed them. */
const MAX_THROTTLE_RATE = 10_000;
const MAX_THROTTLE_BURST = 5_000;
/** Ten years: beyond that a stage-wide maximum limits nothing worth limiting. */
const MAX_SESSION_LIFETIME_CEILING_SECONDS = 315_360_000;
const STAGE_NAME = /^[A-Za-z][A-Za-z0-9-]{0,31}$/;
const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN_PAIR = 'customDomainName and certificateArn must be given together';
const WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[A-Za-z0-9_-]+\/[a-f0-9-]+$/;

/**
 * The CDK context keys this stack reads. Problems are reported in this order, so the custom domain
 * comes before the public base URL that defaults from it.
 */
const CONTEXT_SETTINGS = {
  stageName: setting({
    parse: String,
    default: 'prod',
    check: (value) =>
      STAGE_NAME.test(value)
        ? undefined
        : `stageName must start with a letter and hold only letters, digits and hyphens (at most 32), got "${value}"`,
  }),
  throttleRateLimit: setting({
    parse: readNumber,
    default: 100,
    check: (value, { raw }) =>
      value > 0 && value <= MAX_THROTTLE_RATE
        ? undefined
        : `throttleRateLimit must be a positive number of requests per second, at most ${MAX_THROTTLE_RATE}, got "${show(raw)}"`,
  }),
  throttleBurstLimit: integerSetting(1, MAX_THROTTLE_BURST, 200),
  /**
   * The default usage plan's throttle: every API key without limits of its own, each on its own (the
   * local gateway's API_KEY_RATE_LIMIT and API_KEY_BURST_LIMIT, under the same rules).
   */
  apiKeyRateLimit: integerSetting(
    RATE_LIMIT_BOUNDS.rate.min,
    RATE_LIMIT_BOUNDS.rate.max,
    DEFAULT_API_KEY_LIMITS.rate,
  ),
  apiKeyBurstLimit: integerSetting(
    RATE_LIMIT_BOUNDS.burst.min,
    RATE_LIMIT_BOUNDS.burst.max,
    DEFAULT_API_KEY_LIMITS.burst,
  ),
  /** Also the delay before a revoked API key stops working. */
  authorizerCacheTtlSeconds: integerSetting(0, 3600, 300),
  logRetentionDays: setting({
    parse: (raw): RetentionDays => readNumber(raw),
    default: RetentionDays.ONE_MONTH,
    check: (value, { raw }) =>
      RETENTION_VALUES.has(value)
        ? undefined
        : `logRetentionDays must be one of ${[...RETENTION_VALUES].join(', ')} (CloudWatch Logs retention values), ` +
          `got "${show(raw)}"`,
  }),
  logLevel: setting({
    parse: (raw) => String(raw).toLowerCase() as LogLevel,
    default: 'info' as const,
    check: (value) =>
      LOG_LEVELS.includes(value)
        ? undefined
        : `logLevel must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`,
  }),
  customDomainName: setting({
    parse: (raw) => String(raw).toLowerCase(),
    default: undefined,
    check: (value, { values }) => {
      if (values.certificateArn === undefined) return DOMAIN_PAIR;
      if (!DOMAIN_NAME.test(value)) return `customDomainName must be a DNS name, got "${value}"`;
    },
  }),
  /** ACM certificate in the stack's region (the API endpoint is regional). */
  certificateArn: setting({
    parse: String,
    default: undefined,
    check: (value, { values }) => {
      if (values.customDomainName === undefined) return DOMAIN_PAIR;
      if (!CERTIFICATE_ARN.test(value))
        return `certificateArn must be an ACM certificate ARN, got "${value}"`;
    },
  }),
  /** Base URL of embed links; set from `publicBaseUrl`, else from the custom domain, else undefined. */
  publicBaseUrl: setting({
    // The create-session function's own rules for PUBLIC_BASE_URL, so a value synth accepts never fails
    // the function at start-up.
    parse: (raw, problems) => parseBaseUrl('publicBaseUrl', String(raw), problems),
    default: undefined,
    // And https on top: in AWS, embed URLs carry the token over the internet.
    check: (value, { raw }) => {
      if (value !== undefined && new URL(value).protocol !== 'https:') {
        return `publicBaseUrl must use https (embed links carry a token), got "${String(raw)}"`;
      }
    },
  }),
  /** Origins that may frame the embed page (its CSP frame-ancestors); empty keeps the page's default. */
  allowedEmbedOrigins: setting({
    parse: readList,
    default: [],
    // The rule a board's own list follows too: an origin, and a source the embed function accepts.
    check: (origins) =>
      origins
        .filter((origin) => !isEmbedOrigin(origin))
        .map(
          (origin) =>
            `allowedEmbedOrigins entries must be origins like "https://app.example.com", got "${origin}"`,
        ),
  }),
  /**
   * The stage's default board application: boards without an `appUrl` of their own hand their users to it
   * (the embed function's BOARD_APP_URL). https only: the token it receives crosses the internet.
   */
  boardAppUrl: setting({
    parse: String,
    default: undefined,
    check: (value) => {
      const problem = boardAppUrlProblem(value, { allowLoopbackHttp: false });
      return problem === undefined ? undefined : `boardAppUrl: ${problem}`;
    },
  }),
  alarmEmail: setting({
    parse: String,
    default: undefined,
    check: (value) =>
      EMAIL.test(value) ? undefined : `alarmEmail must be an e-mail address, got "${value}"`,
  }),
  /** The create-session function's METADATA_MAX_BYTES, refused at synth above what the event carriers hold. */
  metadataMaxBytes: setting({
    parse: readNumber,
    default: undefined,
    check: (value, { key, raw }) => {
      const problem = integerRangeProblem(key, value, 1, METADATA_MAX_BYTES_CEILING, show(raw));
      return problem && `${problem} (${METADATA_CEILING_REASON})`;
    },
  }),
  /**
   * The longest session a create may ask for (`expiresInSeconds`), refused beyond it with a 400; unset,
   * any lifetime up to the year 9999 (the spec's rule). The create-session function's
   * MAX_SESSION_LIFETIME_SECONDS.
   */
  maxSessionLifetimeSeconds: integerSetting(60, MAX_SESSION_LIFETIME_CEILING_SECONDS, undefined),
  /**
   * The embed page's limit per client address: requests per 5 minutes, enforced by the rate-based rule of
   * the web ACL the stack puts on the stage (AWS WAF's bounds).
   */
  embedPageRateLimit: integerSetting(
    WAF_RATE_LIMIT_BOUNDS.min,
    WAF_RATE_LIMIT_BOUNDS.max,
    EMBED_PAGE_CLIENT_LIMIT.requests,
  ),
  /**
   * Execution environments Lambda keeps initialized for the embed page, the one route end users wait on:
   * its loads then meet no cold start up to that many at once. Off (0) by default: it is billed by the hour
   * whether used or not (docs/operations.md).
   */
  embedPageProvisionedConcurrency: integerSetting(0, 1000, 0),
  /** A CloudWatch dashboard of the service's golden signals (about $3 a month); `false` leaves it out. */
  dashboard: booleanSetting(true),
  /**
   * With a custom domain, the API's default `execute-api` endpoint is disabled, so the domain (and what
   * fronts it) is the only way in; `false` keeps both.
   */
  disableExecuteApiEndpoint: booleanSetting(true),
  /**
   * The account-wide API Gateway setting (`AWS::ApiGateway::Account`) naming the role that writes access
   * logs: one per account and region, so only one stack may own it. `false` when another stage or another
   * team's stack already sets it.
   */
  apiGatewayAccountRole: booleanSetting(true),
  /**
   * A regional web ACL of the operator's own to put on the stage instead of the stack's (which is then not
   * created): its rules decide, so it should limit the embed page per client itself.
   */
  webAclArn: setting({
    parse: String,
    default: undefined,
    check: (value) =>
      WEB_ACL_ARN.test(value)
        ? undefined
        : `webAclArn must be the ARN of a regional AWS WAF web ACL (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>), got "${value}"`,
  }),
  /**
   * The indexes the deployed stage's tables have, which `npm run deploy` reads and passes (infra/indexes.ts):
   * the stack then adds at most one missing index per table and deploy. Unset: every index at once, as a
   * new stage can have them.
   */
  deployedIndexes: setting({
    parse: (raw, problems): DeployedIndexes => {
      if (typeof raw !== 'string') return raw as DeployedIndexes;
      try {
        return JSON.parse(raw) as DeployedIndexes;
      } catch {
        problems.push(`deployedIndexes is not valid JSON: ${raw}`);
        return {};
      }
    },
    default: undefined,
    check: (value) => deployedIndexesProblem(value),
  }),
};

export type ContextKey = keyof typeof CONTEXT_SETTINGS;
export type ContextReader = (key: ContextKey) => unknown;

/** Each key's value after reading: what its setting parses, or its default. */
type ContextValues = {
  [K in keyof typeof CONTEXT_SETTINGS]: (typeof CONTEXT_SETTINGS)[K] extends ContextSetting<infer T, infer D>
    ? T | D
    : never;
};

export interface CustomDomainConfig {
  domainName: string;
  /** ACM certificate in the stack's region (the API endpoint is regional). */
  certificateArn: string;
}

/** The validated deployment settings of one stage. */
export interface InfraConfig extends Omit<ContextValues, 'customDomainName' | 'certificateArn'> {
  customDomain: CustomDomainConfig | undefined;
  /** The resulting CSP `frame-ancestors` sources, also sent on the errors API Gateway makes itself. */
  frameAncestors: string;
}

/** The CDK context keys this stack reads. */
export const CONTEXT_KEYS = Object.keys(CONTEXT_SETTINGS) as ContextKey[];

/** The defaults of the keys that have one; cdk.json repeats them so they are visible to operators. */
export const CONTEXT_DEFAULTS: Readonly<Partial<ContextValues>> = Object.fromEntries(
  CONTEXT_KEYS.flatMap((key) => {
    const value = CONTEXT_SETTINGS[key].default;
    return value === undefined ? [] : [[key, value]];
  }),
);

/**
 * Reads and validates the stack's CDK context. Values given with `-c key=value` arrive as strings and
 * values from cdk.json keep their JSON type, so both forms are accepted. Throws `InfraConfigError`.
 */
export function readInfraConfig(context: ContextReader): InfraConfig {
  const values = {} as Record<ContextKey, unknown>;
  const given = new Map<ContextKey, { raw: unknown; problems: string[] }>();
  for (const key of CONTEXT_KEYS) {
    const settingOfKey: AnySetting = CONTEXT_SETTINGS[key];
    const raw = givenValue(context(key));
    if (raw === undefined) {
      values[key] = settingOfKey.default;
      continue;
    }
    const problems: string[] = [];
    values[key] = settingOfKey.parse(raw, problems);
    given.set(key, { raw, problems });
  }
  for (const [key, { raw, problems }] of given) {
    const settingOfKey: AnySetting = CONTEXT_SETTINGS[key];
    problems.push(...[settingOfKey.check?.(values[key], { key, raw, values }) ?? []].flat());
  }
  const problems = [...given.values()].flatMap((entry) => entry.problems);
  if (problems.length > 0) throw new InfraConfigError(`Invalid CDK context: ${problems.join('; ')}`);
  return withDerivedSettings(values as ContextValues);
}

/** The settings that follow from others: the custom domain pair, the base URL it implies, the CSP sources. */
function withDerivedSettings({ customDomainName, certificateArn, ...values }: ContextValues): InfraConfig {
  const customDomain =
    customDomainName !== undefined && certificateArn !== undefined
      ? { domainName: customDomainName, certificateArn }
      : undefined;
  return {
    ...values,
    publicBaseUrl: values.publicBaseUrl ?? (customDomain && `https://${customDomain.domainName}`),
    customDomain,
    frameAncestors:
      values.allowedEmbedOrigins.length > 0 ? values.allowedEmbedOrigins.join(' ') : DEFAULT_FRAME_ANCESTORS,
  };
}

/** The value as given, trimmed; undefined when absent or blank, so the key's default applies. */
function givenValue(value: unknown): unknown {
  const trimmed = typeof value === 'string' ? value.trim() : value;
  return trimmed === null || trimmed === '' ? undefined : trimmed;
}

/** A number from JSON or from a `-c` string; anything else becomes NaN so the check reports it. */
function readNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return Number.NaN;
}

/** A list from a JSON array, a JSON array string or a comma-separated string. */
function readList(
  value: unknown,
  problems: string[],
  key = 'allowedEmbedOrigins',
  what = 'origins',
): readonly string[] {
  let items: unknown = value;
  if (typeof value === 'string') {
    if (value.startsWith('[')) {
      try {
        items = JSON.parse(value);
      } catch {
        problems.push(`${key} is not a valid JSON array: ${value}`);
        return [];
      }
    } else {
      items = value.split(',');
    }
  }
  if (!Array.isArray(items) || !items.every((item) => typeof item === 'string')) {
    problems.push(`${key} must be a list of ${what}, got ${show(value)}`);
    return [];
  }
  return items.map((item) => item.trim()).filter((item) => item !== '');
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
