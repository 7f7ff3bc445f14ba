import { describe, expect, it } from 'vitest';
import {
  keyOwnerSubjectMessage,
  subjectMessage,
  tenantIdMessage,
  tenantSubjectMessage,
} from '#lib/adapters/signing/subject';

const text = (bytes: Buffer) => bytes.toString('utf8');

describe('the messages the subject key MACs', () => {
  it('keeps an organization tenant’s subject message exactly as it was before tenants were recorded', () => {
    expect(text(subjectMessage('org_a', 'customer-42'))).toBe('["pairwise-sub","org_a","customer-42"]');
    expect(tenantSubjectMessage({ kind: 'organization', id: 'org_a' }, 'customer-42')).toEqual(
      subjectMessage('org_a', 'customer-42'),
    );
  });

  it('tags a key owner tenant’s subject message apart, so it never equals an organization’s', () => {
    const owner = tenantSubjectMessage({ kind: 'keyOwner', id: 'org_a' }, 'customer-42');
    expect(owner).toEqual(keyOwnerSubjectMessage('org_a', 'customer-42'));
    expect(text(owner)).toBe('["pairwise-sub-key-owner","org_a","customer-42"]');
    expect(owner).not.toEqual(subjectMessage('org_a', 'customer-42'));
  });

  it('tags the tenant id apart from every subject, with the kind in it', () => {
    expect(text(tenantIdMessage({ kind: 'organization', id: 'org_a' }))).toBe(
      '["tenant-id","organization","org_a"]',
    );
    expect(text(tenantIdMessage({ kind: 'keyOwner', id: 'org_a' }))).toBe('["tenant-id","keyOwner","org_a"]');
  });

  it('cannot be made to collide by ids holding separators or quotes', () => {
    expect(subjectMessage('a","b', 'c')).not.toEqual(subjectMessage('a', 'b","c'));
    expect(keyOwnerSubjectMessage('a', 'b')).not.toEqual(subjectMessage('pairwise-sub-key-owner', 'a'));
  });
});
