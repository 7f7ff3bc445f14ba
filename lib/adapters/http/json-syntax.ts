/**
 * Where a text stops being JSON: the offset of the first character that cannot continue a JSON text
 * (its length when the text ends too soon), or undefined when it is valid JSON. JSON.parse says where only
 * in some Node versions and some messages, and some of its messages quote the input; this scanner gives
 * every runtime the same answer. It keeps its own stack, so no nesting depth can overflow it.
 */
export function jsonSyntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  // The open containers, and whether each still has no member.
  const stack: Array<{ type: 'array' | 'object'; empty: boolean }> = [];
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const string = (): boolean => {
    if (text[i] !== '"') return false;
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i += 2;
            while (i < text.length && /[0-9a-fA-F]/.test(text[i] as string)) i++;
            return false;
          }
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else {
          i++;
          return false;
        }
      } else i++;
    }
    return false;
  };
  const scalar = (): boolean => {
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return true;
      }
    }
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === '' || match[0] === '-') return false;
    i += match[0].length;
    return true;
  };
  /** One value, or the opening of a container, whose content the loop below reads. */
  const value = (): boolean => {
    skipSpace();
    const c = text[i];
    if (c === '{' || c === '[') {
      stack.push({ type: c === '{' ? 'object' : 'array', empty: true });
      i++;
      return true;
    }
    if (c === '"') return string();
    return scalar();
  };
  const member = (): boolean => {
    skipSpace();
    if (!string()) return false;
    skipSpace();
    if (text[i] !== ':') return false;
    i++;
    return value();
  };

  if (!value()) return i;
  while (stack.length > 0) {
    skipSpace();
    const open = stack[stack.length - 1] as { type: 'array' | 'object'; empty: boolean };
    const close = open.type === 'object' ? '}' : ']';
    if (text[i] === close) {
      stack.pop();
      i++;
      continue;
    }
    if (open.empty) open.empty = false;
    else if (text[i] === ',') i++;
    else return i;
    if (!(open.type === 'object' ? member() : value())) return i;
  }
  skipSpace();
  return i < text.length ? i : undefined;
}

/** Where an offset is, as a person counts: line and column from 1. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}
