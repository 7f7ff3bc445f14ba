import type { Tenant } from '#lib/domain/tenant';

/**
 * The messages the subject key MACs: JSON arrays, so no pair of ids can be mistaken for another whatever
 * they contain, each opened by a tag of its own, so a subject and a tenant id are never the MAC of the
 * same bytes. Every adapter (KMS, the local key file) hashes exactly these bytes.
 */

/**
 * An organization tenant's subject: the bytes every subject was the MAC of before tenants were recorded
 * (the board's organization and the external user id), unchanged, so an application that keyed accounts
 * by `sub` sees the same subject for every organization's user.
 */
export function subjectMessage(orgId: string, userId: string): Buffer {
  return Buffer.from(JSON.stringify(['pairwise-sub', orgId, userId]), 'utf8');
}

/** A key owner tenant's subject: its own tag, so it never equals an organization's for any pair of ids. */
export function keyOwnerSubjectMessage(keyOwnerId: string, userId: string): Buffer {
  return Buffer.from(JSON.stringify(['pairwise-sub-key-owner', keyOwnerId, userId]), 'utf8');
}

/** The subject message of a tenant's user. */
export function tenantSubjectMessage(tenant: Tenant, userId: string): Buffer {
  return tenant.kind === 'organization'
    ? subjectMessage(tenant.id, userId)
    : keyOwnerSubjectMessage(tenant.id, userId);
}

/** The message of a tenant's opaque id (the `tid` claim): its kind and id under a tag of its own. */
export function tenantIdMessage(tenant: Tenant): Buffer {
  return Buffer.from(JSON.stringify(['tenant-id', tenant.kind, tenant.id]), 'utf8');
}
