/**
 * Who operators are, as what they change records them. Operators use no API key: the provisioning API
 * records the caller's IAM principal (its ARN), the admin CLI `cli:` and the name of the user running it.
 * Revocations and cut-offs made before operators were told apart recorded `admin-cli`.
 */

/** How operators were recorded before each was named; still read as an operator. */
export const LEGACY_OPERATOR = 'admin-cli';

/** The prefixes of operator identities; no key owner's id may start with one (see `isReservedUserId`). */
const OPERATOR_PREFIXES = ['arn:', 'cli:'] as const;

/** The admin CLI run by this (operating system) user. */
export function cliOperator(userName: string): string {
  return `cli:${userName || 'unknown'}`;
}

/** True for an identity an operator's change recorded: an IAM principal, the CLI, or the legacy name. */
export function isOperatorActor(id: string | null): boolean {
  return id !== null && (id === LEGACY_OPERATOR || isReservedUserId(id));
}

/** True for an id that names an operator and so can be no key owner's. */
export function isReservedUserId(id: string): boolean {
  return OPERATOR_PREFIXES.some((prefix) => id.startsWith(prefix));
}
