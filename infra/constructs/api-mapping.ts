/**
 * A JSON document as a VTL mapping template. `$` and `#` start VTL references and directives, so they
 * are written as JSON unicode escapes: the template stays valid JSON and renders unchanged.
 */
export function jsonTemplate(value: unknown): string {
  return JSON.stringify(value).replaceAll('$', '\\u0024').replaceAll('#', '\\u0023');
}

/**
 * Header values as API Gateway mapping expressions: a static value is single-quoted. A quote inside the
 * value has no documented escape, so it fails synthesis here rather than the deployment.
 */
export function quoted(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      if (value.includes("'")) throw new Error(`The ${name} header value cannot contain a quote: ${value}`);
      return [name, `'${value}'`];
    }),
  );
}
