/**
 * The tenant a session belongs to: whose end user it is. Decided once, when the session is created, and
 * stored with it: the board's organization when the key owner was then a member of it, otherwise the key
 * owner alone (a tenant creating sessions on another organization's public board). The kind travels with
 * the id everywhere, so an organization id and a key owner's user id that happen to be equal are never
 * the same tenant.
 */
export type Tenant = { kind: 'organization'; id: string } | { kind: 'keyOwner'; id: string };

export type TenantKind = Tenant['kind'];

/** The tenant of a session created by `keyOwnerId` on a board of `orgId`, given whether it is a member. */
export function tenantOf(orgId: string, keyOwnerId: string, keyOwnerIsMember: boolean): Tenant {
  return keyOwnerIsMember && orgId !== ''
    ? { kind: 'organization', id: orgId }
    : { kind: 'keyOwner', id: keyOwnerId };
}

/**
 * The tenant of a session stored before tenants were recorded: its board's organization, as its subject
 * was derived then, so such a session keeps the `sub` its application has seen.
 */
export function legacyTenant(orgId: string): Tenant {
  return { kind: 'organization', id: orgId };
}

/** A tenant as stored or carried in a message; undefined for anything that is not one. */
export function parseTenant(value: unknown): Tenant | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, id } = value as Record<string, unknown>;
  if (typeof id !== 'string') return undefined;
  return kind === 'organization' || kind === 'keyOwner' ? { kind, id } : undefined;
}
