import { ValidationError } from '#lib/domain/errors';

/** Deepest nesting DynamoDB stores; the metadata map itself is level 1. */
export const MAX_METADATA_DEPTH = 32;
/** DynamoDB numbers: magnitudes from 1E-130 to 9.9999999999999999999999999999999999999E+125. */
const DYNAMODB_MIN_MAGNITUDE = 1e-130;
/** Every double at or above 1e126 is beyond DynamoDB's largest number. */
const DYNAMODB_MAGNITUDE_LIMIT = 1e126;

/**
 * Enforces the storage's limits on `metadata` before DynamoDB ever sees it, so a value the table would
 * refuse is a 400 with a clear message and never a 500: nesting depth, serialized size, numbers that
 * survive the round trip exactly, and strings that are well-formed Unicode.
 */
export function checkMetadata(metadata: Record<string, unknown>, maxBytes: number): void {
  // Iterative walk: a hostile 10,000-level document must not overflow the stack.
  const stack: Array<{ value: unknown; depth: number; path: string }> = [
    { value: metadata, depth: 1, path: 'metadata' },
  ];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof value === 'number') {
      checkNumber(value, path);
    } else if (typeof value === 'string') {
      checkWellFormed(value, path);
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_METADATA_DEPTH) {
        throw new ValidationError(`metadata must be nested at most ${MAX_METADATA_DEPTH} levels deep`);
      }
      const entries = Array.isArray(value)
        ? value.map((v, i) => [String(i), v] as const)
        : Object.entries(value);
      for (const [key, child] of entries) {
        checkWellFormed(key, `${path} key`);
        stack.push({
          value: child,
          depth: depth + 1,
          path: Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`,
        });
      }
    }
  }
  // Only after the walk: JSON.stringify recurses, and a few thousand levels would overflow the stack (a 500).
  const size = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (size > maxBytes) {
    throw new ValidationError(
      `metadata must be at most ${maxBytes} bytes when serialized as JSON (got ${size})`,
    );
  }
}

function checkNumber(value: number, path: string): void {
  const magnitude = Math.abs(value);
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw new ValidationError(
      `${path} is an integer beyond 2^53 that cannot be stored exactly; send it as a string`,
    );
  }
  if (magnitude !== 0 && (magnitude < DYNAMODB_MIN_MAGNITUDE || magnitude >= DYNAMODB_MAGNITUDE_LIMIT)) {
    throw new ValidationError(
      `${path} is a number outside the range that can be stored; send it as a string`,
    );
  }
}

/** Lone UTF-16 surrogates (legal in JSON escapes) cannot be encoded as the UTF-8 DynamoDB requires. */
export function checkWellFormed(value: string, path: string): void {
  if (!value.isWellFormed()) throw new ValidationError(`${path} contains invalid Unicode (a lone surrogate)`);
}
