import type { SessionView } from '#lib/domain/session';
import type { LocalRuntime } from '#local/runtime';
import { validBody } from './fixtures';
import { apiCall, ensureStatus } from './local-runtime';

/** A session created to set a test up: its view as create answered it, its token and its embed link. */
export interface CreatedSession<S> {
  session: S;
  token: string;
  embedUrl: string;
}

/**
 * Creates a session with `who`'s API key to set a test up: `validBody` on the demo's public board, with
 * `fields` over it. Any answer but 201 fails the test as a setup failure (`ensureStatus`).
 */
export async function createSessionAs<S = { id: string; [field: string]: unknown }>(
  runtime: LocalRuntime,
  who: { apiKey: string },
  fields: Record<string, unknown> = {},
): Promise<CreatedSession<S>> {
  const result = await apiCall(
    runtime,
    who.apiKey,
    'POST',
    '/api/embed/sessions',
    validBody({ boardId: runtime.demo?.publicBoardId, ...fields }),
  );
  ensureStatus(result, 201);
  return {
    session: result.body.session as S,
    token: String(result.body.sessionToken),
    embedUrl: String(result.body.embedUrl),
  };
}

/**
 * Creates a session as `who` to set a test up (`createSessionAs`) and reads it back: its view as
 * `GET /api/embed/sessions/{id}` answers it, as events carry it.
 */
export async function createdSessionView(
  runtime: LocalRuntime,
  who: { apiKey: string },
): Promise<SessionView> {
  const { session } = await createSessionAs<{ id: string }>(runtime, who);
  const read = ensureStatus(
    await apiCall(runtime, who.apiKey, 'GET', `/api/embed/sessions/${session.id}`),
    200,
  );
  return read.body.session as SessionView;
}

/** The seeded demo tenant's API key, as the `who` of `createSessionAs`. */
export function demoKey(runtime: LocalRuntime): { apiKey: string } {
  if (!runtime.demo) throw new Error('the runtime was started without the demo data');
  return { apiKey: runtime.demo.apiKey };
}
