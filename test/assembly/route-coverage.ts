/**
 * The template's methods (`METHOD path`) that no request of the run reached: a route added without an
 * assembly test that calls it. Each route is then checked twice for a function that cannot start: by the
 * cold-start test, and by a request that needs its function's answer.
 */
export function uncalledRoutes(methods: readonly string[], called: Iterable<string>): string[] {
  const reached = new Set(called);
  return methods.filter((method) => !reached.has(method)).sort();
}
