/** The resource a request path lands on: its routes (one per method) and the path parameters it binds. */
export interface ResolvedResource<R extends { path: string }> {
  path: string;
  routes: R[];
  pathParameters: Record<string, string> | null;
}

/**
 * The resource API Gateway picks for a request path. Paths are compared segment by segment, and where
 * resources differ a literal segment beats a `{name}` one, so `/sessions/revoke` is never read as a session
 * id. A parameter binds one non-empty segment, URL-decoded as API Gateway passes it.
 */
export function resolveResource<R extends { path: string }>(
  routes: readonly R[],
  requestPath: string,
): ResolvedResource<R> | undefined {
  const segments = requestPath.split('/');
  let best: { path: string; params: Record<string, string>; rank: number[] } | undefined;
  for (const path of new Set(routes.map((route) => route.path))) {
    const match = matchTemplate(path.split('/'), segments);
    if (match && (!best || outranks(match.rank, best.rank))) best = { path, ...match };
  }
  if (!best) return undefined;
  const { path, params } = best;
  return {
    path,
    routes: routes.filter((route) => route.path === path),
    pathParameters: Object.keys(params).length > 0 ? params : null,
  };
}

function matchTemplate(
  template: string[],
  segments: string[],
): { params: Record<string, string>; rank: number[] } | undefined {
  if (template.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  const rank: number[] = [];
  for (let i = 0; i < template.length; i++) {
    const expected = template[i] as string;
    const actual = segments[i] as string;
    const name = /^\{(\w+)\}$/.exec(expected)?.[1];
    if (name === undefined) {
      if (expected !== actual) return undefined;
      rank.push(1);
      continue;
    }
    if (actual === '') return undefined;
    try {
      params[name] = decodeURIComponent(actual);
    } catch {
      return undefined;
    }
    rank.push(0);
  }
  return { params, rank };
}

/** True when `a` has a literal segment at the first position where the two differ. */
function outranks(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return false;
}
