/**
 * The message a pairwise subject is the keyed hash of: a JSON array, so no tenant id and user id pair can
 * be mistaken for another whatever they contain. Every adapter hashes exactly these bytes.
 */
export function subjectMessage(tenantId: string, userId: string): Buffer {
  return Buffer.from(JSON.stringify(['pairwise-sub', tenantId, userId]), 'utf8');
}
