import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { embedHeaders, htmlResponse } from './http';
import { type NoticeCode, type Presentation, parsePresentation, TEXTS } from './i18n';
import { layout, notice } from './page';

/**
 * `GET /embed/ended`: the service's view after a session ended, for a board application to send its
 * frame to when its own session of it ends (`/embed-board.js` does, and the reference application's
 * server redirects there). It needs no token, since it shows nothing of the session: only what happened,
 * in the session's language and theme, which the application passes on.
 */
export const ENDED_VIEW_PATH = '/embed/ended';

/** Why the session ended, as far as the view says: `expired`, `revoked`, or the neutral `ended`. */
export type EndedReason = 'expired' | 'revoked' | 'ended';

/** The reason a view shows: `expired` or `revoked` as asked, the neutral `ended` for anything else. */
export function parseEndedReason(value: string | undefined): EndedReason {
  return value === 'expired' || value === 'revoked' ? value : 'ended';
}

/** The notice of each reason: the same words the refusal pages of an expired or revoked link say. */
const NOTICE_OF: Readonly<Record<EndedReason, NoticeCode>> = {
  expired: 'session_expired',
  revoked: 'session_revoked',
  ended: 'ended',
};

/**
 * The view: one sentence and one action, in the asked language and theme. The page's own script tells
 * the framing page `expired` or `revoked` (with the view's height), as the built-in page does, so the
 * host hears the end even when the application could not say it.
 */
export function renderEndedView(reason: EndedReason, presentation: Presentation): string {
  const texts = TEXTS[presentation.locale];
  const code = NOTICE_OF[reason];
  return layout(
    presentation,
    texts.notices[code].sentence,
    { 'embed-state': 'ended', 'embed-reason': reason },
    `<div class="embed notice-page" id="embed-root">
${notice(texts, code, 'embed-ended')}
</div>`,
  );
}

/**
 * The answer to `GET /embed/ended?reason=…&locale=…&theme=…`: always `200`, never an error page (an
 * unknown or missing parameter falls back to the neutral view, English, `auto`), with the headers of
 * every embed page, framed under the stage's `frame-ancestors` (it belongs to no board).
 */
export function endedViewResponse(
  event: Pick<APIGatewayProxyEvent, 'queryStringParameters'>,
  frameAncestors: string,
): APIGatewayProxyResult {
  const query = event.queryStringParameters;
  return htmlResponse(
    200,
    renderEndedView(parseEndedReason(query?.reason), parsePresentation(query)),
    embedHeaders(frameAncestors),
  );
}
