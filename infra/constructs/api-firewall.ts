import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import {
  CLIENT_LIMITED_RESPONSE,
  EMBED_PAGE_CLIENT_LIMIT,
  EMBED_PAGE_LIMITED_PATH,
} from '#lib/definitions/rate-limits';

export interface ApiFirewallProps {
  stage: Stage;
  /** Requests per evaluation window from one source address to the embed page. */
  embedPageRateLimit: number;
  /** An operator's own web ACL to associate instead of the stack's. */
  webAclArn: string | undefined;
}

/** The name of the rate-based rule, also its CloudWatch metric. */
export const EMBED_PAGE_RULE_NAME = 'embed-page-per-client';
const LIMITED_BODY_KEY = 'client-limited';

/**
 * The stage's web ACL. The embed page is the one route anyone may call without a key, and each load reads
 * tables (and may sign), so one address may not load it more than the limit allows in a window; every
 * other request passes (API-key routes are limited per key by the usage plans). An operator can bring a web
 * ACL of their own instead, whose rules then decide.
 */
export class ApiFirewall extends Construct {
  readonly webAclArn: string;
  readonly webAcl: CfnWebACL | undefined;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    if (props.webAclArn !== undefined) {
      this.webAclArn = props.webAclArn;
    } else {
      this.webAcl = new CfnWebACL(this, 'WebAcl', {
        scope: 'REGIONAL',
        description: 'Embed session API: the embed page limited per client address',
        defaultAction: { allow: {} },
        visibilityConfig: visibility('embed-session-api'),
        customResponseBodies: {
          [LIMITED_BODY_KEY]: { contentType: 'TEXT_HTML', content: CLIENT_LIMITED_RESPONSE.body },
        },
        rules: [
          {
            name: EMBED_PAGE_RULE_NAME,
            priority: 0,
            action: {
              block: {
                customResponse: {
                  responseCode: CLIENT_LIMITED_RESPONSE.status,
                  customResponseBodyKey: LIMITED_BODY_KEY,
                  responseHeaders: [
                    { name: 'Retry-After', value: String(CLIENT_LIMITED_RESPONSE.retryAfterSeconds) },
                  ],
                },
              },
            },
            statement: {
              rateBasedStatement: {
                limit: props.embedPageRateLimit,
                evaluationWindowSec: EMBED_PAGE_CLIENT_LIMIT.windowSeconds,
                aggregateKeyType: 'IP',
                // `/embed` at the end of the path, with or without the stage before it (execute-api
                // domain or custom domain); the scripts and the ended views are not counted.
                scopeDownStatement: {
                  byteMatchStatement: {
                    fieldToMatch: { uriPath: {} },
                    positionalConstraint: 'ENDS_WITH',
                    searchString: EMBED_PAGE_LIMITED_PATH,
                    textTransformations: [{ priority: 0, type: 'NONE' }],
                  },
                },
              },
            },
            visibilityConfig: visibility(EMBED_PAGE_RULE_NAME),
          },
        ],
      });
      this.webAclArn = this.webAcl.attrArn;
    }
    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAclArn,
    });
  }
}

/**
 * Metrics, but no sampled requests: a sample keeps the request's URI and headers, where embed tokens and
 * API keys travel.
 */
function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: false };
}
