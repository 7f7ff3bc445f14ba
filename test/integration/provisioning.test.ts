import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createClient, EmbedSessionError } from '@embed-session/client';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '#admin/cli';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { hashCredential } from '#lib/domain/credentials';
import { createSessionAs } from '#test/support/create-session-as';
import { adminEnv, apiCall, call, keyOwner, testTarget } from '#test/support/local-runtime';
import { provisioningCall, signedRequest } from '#test/support/provisioning';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The provisioning API over HTTP, on the local runtime (dynalite, or DynamoDB Local with
 * TEST_DYNAMODB=dynamodb-local) and on the assembly: AWS_IAM authorization as API Gateway applies it
 * (local/sigv4.ts stands in for IAM), idempotent writes, and the caller's principal on what it changes.
 */
const runtime = useTestRuntime();
// On the assembly, issuing or revoking a key talks to API Gateway's usage plans, which it does not emulate.
const onAssembly = testTarget() === 'assembly';

const board = { visibility: 'PRIVATE', name: 'Roadmap', embedOrigins: ['https://app.example.com'] };
const embed = (token: string) =>
  call(runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });
const operatorView = (id: string) =>
  runAdmin(['get-session', '--id', id], adminEnv(runtime)) as Promise<{
    status: string;
    revokedByUserId: string;
  }>;

describe('AWS IAM authorization of the provisioning routes', () => {
  it('answers a request signed by an allowed principal', async () => {
    const result = await provisioningCall(runtime, 'GET', '/admin/orgs/org_demo/members');
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      orgId: 'org_demo',
      members: expect.arrayContaining([runtime.demo?.userId]),
    });
  });

  it('answers an unsigned request as API Gateway does, as a route that is not there (404)', async () => {
    const result = await call(runtime, '/admin/orgs/org_demo/members');
    expect(result.status).toBe(404);
    expect(result.body).toEqual({ error: 'Not Found', message: 'No such route' });
  });

  it('refuses an API key: these routes take AWS signatures only', async () => {
    const result = await apiCall(
      runtime,
      String(runtime.demo?.apiKey),
      'GET',
      '/admin/orgs/org_demo/members',
    );
    expect(result.status).toBe(404);
  });

  it.each([
    ['a wrong secret', { secretAccessKey: 'not-the-secret' }],
    ['an unknown access key id', { accessKeyId: 'AKIAUNKNOWN000000000' }],
    ['another region', { region: 'us-west-2' }],
  ])('refuses a signature made with %s with 403', async (_name, wrong) => {
    const result = await provisioningCall(runtime, 'GET', '/admin/orgs/org_demo/members', undefined, {
      ...runtime.provisioning,
      ...wrong,
    });
    expect(result.status).toBe(403);
    expect(result.body).toEqual({ error: 'Forbidden', message: 'The request signature does not verify' });
  });

  it('refuses a body changed after it was signed, and writes nothing', async () => {
    const path = '/admin/orgs/org_iam/boards/board_tampered';
    const signedBody = JSON.stringify({ visibility: 'PRIVATE' });
    const headers = await signedRequest(
      new URL(`${runtime.baseUrl}${path}`),
      { method: 'PUT', body: signedBody, headers: { 'content-type': 'application/json' } },
      runtime.provisioning,
    );
    const result = await call(runtime, path, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ visibility: 'PUBLIC' }),
    });
    expect(result.status).toBe(403);
    expect((await provisioningCall(runtime, 'GET', '/admin/orgs/org_iam/boards')).body).toEqual({ data: [] });
  });
});

describe('boards', () => {
  it('creates a board with the caller’s principal, answers a retry of the same state as unchanged', async () => {
    const path = '/admin/orgs/org_prov/boards/board_prov';
    const created = await provisioningCall(runtime, 'PUT', path, board);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      outcome: 'created',
      board: {
        boardId: 'board_prov',
        orgId: 'org_prov',
        visibility: 'PRIVATE',
        name: 'Roadmap',
        embedOrigins: ['https://app.example.com'],
        appUrl: null,
        logoutUrl: null,
        updatedBy: runtime.provisioning.principalArn,
        updatedAt: expect.any(String),
      },
    });
    const retried = await provisioningCall(runtime, 'PUT', path, board);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ ...created.body, outcome: 'unchanged' });

    // The desired state: what the body leaves out is cleared.
    const renamed = await provisioningCall(runtime, 'PUT', path, { visibility: 'PUBLIC' });
    expect(renamed.body).toMatchObject({
      outcome: 'updated',
      board: { visibility: 'PUBLIC', name: null, embedOrigins: [] },
    });
    const listed = await provisioningCall(runtime, 'GET', '/admin/orgs/org_prov/boards');
    expect(listed.body).toEqual({ data: [(renamed.body as { board: unknown }).board] });
  });

  it('refuses to move a board to another organization, and a body it cannot read', async () => {
    await provisioningCall(runtime, 'PUT', '/admin/orgs/org_a1/boards/board_owned', board);
    const moved = await provisioningCall(runtime, 'PUT', '/admin/orgs/org_b1/boards/board_owned', board);
    expect(moved.status).toBe(400);
    expect(moved.body.message).toMatch(/belongs to another organization/);
    const invalid = await provisioningCall(runtime, 'PUT', '/admin/orgs/org_a1/boards/board_x', {
      visibility: 'SECRET',
    });
    expect(invalid.status).toBe(400);
  });

  it('deletes a board and ends its sessions: their links are refused from the next load', async () => {
    const path = '/admin/orgs/org_demo/boards/board_doomed';
    await provisioningCall(runtime, 'PUT', path, { visibility: 'PUBLIC' });
    const { session, token } = await createSessionAs(
      runtime,
      { apiKey: String(runtime.demo?.apiKey) },
      { boardId: 'board_doomed' },
    );
    expect((await embed(token)).status).toBe(200);

    const deleted = await provisioningCall(runtime, 'DELETE', path);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({
      boardId: 'board_doomed',
      orgId: 'org_demo',
      deleted: true,
      sessionsEndedAt: expect.any(String),
    });
    expect((await embed(token)).status).toBe(401);
    expect(await operatorView(session.id)).toMatchObject({
      status: 'revoked',
      revokedByUserId: runtime.provisioning.principalArn,
    });
    // Made again under the same id, the board does not bring the old link back.
    await provisioningCall(runtime, 'PUT', path, { visibility: 'PUBLIC' });
    expect((await embed(token)).status).toBe(401);
    expect(
      (await provisioningCall(runtime, 'DELETE', '/admin/orgs/org_other/boards/board_doomed')).status,
    ).toBe(404);
  });
});

describe('members', () => {
  it('adds a member once, lists it, and removes it idempotently', async () => {
    const path = '/admin/orgs/org_team/members/backend-1';
    expect((await provisioningCall(runtime, 'PUT', path)).status).toBe(201);
    const again = await provisioningCall(runtime, 'PUT', path);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      orgId: 'org_team',
      userId: 'backend-1',
      member: true,
      outcome: 'unchanged',
    });
    expect((await provisioningCall(runtime, 'GET', '/admin/orgs/org_team/members')).body).toEqual({
      orgId: 'org_team',
      members: ['backend-1'],
    });
    expect((await provisioningCall(runtime, 'DELETE', path)).body).toEqual({
      orgId: 'org_team',
      userId: 'backend-1',
      removed: true,
    });
    expect((await provisioningCall(runtime, 'DELETE', path)).body).toEqual({
      orgId: 'org_team',
      userId: 'backend-1',
      removed: false,
    });
  });

  it('removing a member with endSessions ends the links the member created on the organization’s boards only', async () => {
    const leaving = await keyOwner(runtime, 'leaving-member', ['org_demo']);
    const staying = await keyOwner(runtime, 'staying-member', ['org_demo']);
    const mine = await createSessionAs(runtime, leaving, { boardId: runtime.demo?.privateBoardId });
    const theirs = await createSessionAs(runtime, staying, { boardId: runtime.demo?.privateBoardId });
    const result = await provisioningCall(
      runtime,
      'DELETE',
      '/admin/orgs/org_demo/members/leaving-member?endSessions=true',
    );
    expect(result.body).toMatchObject({ removed: true, sessionsEndedAt: expect.any(String) });
    expect((await embed(mine.token)).status).toBe(401);
    expect((await embed(theirs.token)).status).toBe(200);
  });
});

describe.skipIf(onAssembly)('API keys', () => {
  it('issues a key that works at once, shown once, recorded as the caller’s, with its expiry', async () => {
    const created = await provisioningCall(runtime, 'POST', '/admin/api-keys', {
      userId: 'prov-owner',
      name: 'ci',
      expiresInDays: 30,
    });
    expect(created.status).toBe(201);
    const { apiKey, keyId, expiresAt } = created.body as { apiKey: string; keyId: string; expiresAt: string };
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect((await apiCall(runtime, apiKey, 'GET', '/api/embed/sessions?userId=x')).status).toBe(200);
    const listed = await provisioningCall(runtime, 'GET', '/admin/api-keys?userId=prov-owner');
    expect(listed.body).toEqual({
      data: [
        expect.objectContaining({
          keyId,
          status: 'ACTIVE',
          expiresAt,
          createdBy: runtime.provisioning.principalArn,
        }),
      ],
    });
    expect(listed.text).not.toContain(apiKey);
  });

  it('records a key’s last use, and writes it no more than once per period', async () => {
    const key = await keyOwner(runtime, 'last-use-owner');
    const lastUse = async () =>
      (
        (await provisioningCall(runtime, 'GET', '/admin/api-keys?userId=last-use-owner')).body.data as {
          lastUsedAt: string | null;
        }[]
      )[0]?.lastUsedAt;
    expect(await lastUse()).toBeNull();
    await apiCall(runtime, key.apiKey, 'GET', '/api/embed/sessions?userId=x');
    const first = await lastUse();
    expect(first).toEqual(expect.any(String));
    await apiCall(runtime, key.apiKey, 'GET', '/api/embed/sessions?userId=x');
    expect(await lastUse()).toBe(first);
  });

  it('refuses a key from its expiry on with 401', async () => {
    const key = await keyOwner(runtime, 'expired-owner');
    const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
    try {
      await db.send(
        new PutCommand({
          TableName: runtime.tables.apiKeys,
          Item: {
            keyHash: hashCredential(key.apiKey),
            keyId: key.keyId,
            userId: key.userId,
            name: null,
            status: 'ACTIVE',
            createdAt: '2026-01-01T00:00:00.000Z',
            revokedAt: null,
            expiresAt: new Date(Date.now() - 1_000).toISOString(),
          },
        }),
      );
    } finally {
      db.destroy();
    }
    const result = await apiCall(runtime, key.apiKey, 'GET', '/api/embed/sessions?userId=x');
    expect(result.status).toBe(401);
    expect(result.body).toEqual({ error: 'Unauthorized', message: 'The API key is invalid' });
  });

  it('revokes a key with endSessions: its links are refused from the next load, other keys’ links still open', async () => {
    const leaked = await keyOwner(runtime, 'leaky-owner');
    const otherKey = await keyOwner(runtime, 'leaky-owner');
    const fromLeaked = await createSessionAs(runtime, leaked);
    const fromOther = await createSessionAs(runtime, otherKey);
    const revoked = await provisioningCall(runtime, 'POST', `/admin/api-keys/${leaked.keyId}/revoke`, {
      endSessions: true,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({
      status: 'REVOKED',
      revokedBy: runtime.provisioning.principalArn,
      sessionsEndedAt: expect.any(String),
    });
    expect((await embed(fromLeaked.token)).status).toBe(401);
    expect((await embed(fromOther.token)).status).toBe(200);
    expect((await apiCall(runtime, leaked.apiKey, 'GET', '/api/embed/sessions?userId=x')).status).toBe(401);
    expect(
      (await provisioningCall(runtime, 'POST', '/admin/api-keys/key_000000000000000000000000/revoke')).status,
    ).toBe(404);
  });

  it('takes a revocation whose body is only whitespace as one without a body (no ending of sessions)', async () => {
    const key = await keyOwner(runtime, 'blank-body-owner');
    const path = `/admin/api-keys/${key.keyId}/revoke`;
    const init = { method: 'POST', body: ' \n', headers: { 'content-type': 'application/json' } };
    const headers = await signedRequest(new URL(`${runtime.baseUrl}${path}`), init, runtime.provisioning);
    const revoked = await call(runtime, path, { method: 'POST', headers, body: init.body });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ keyId: key.keyId, status: 'REVOKED' });
    expect(revoked.body.sessionsEndedAt).toBeUndefined();
  });
});

describe('the typed client, given AWS credentials', () => {
  const client = () =>
    createClient({
      baseUrl: runtime.baseUrl,
      aws: {
        region: runtime.provisioning.region,
        credentials: async () => ({
          accessKeyId: runtime.provisioning.accessKeyId,
          secretAccessKey: runtime.provisioning.secretAccessKey,
        }),
      },
    });

  it('signs with the SDK signer: puts a board and a member, lists them, idempotently', async () => {
    const api = client();
    const put = await api.putBoard('org_client', 'board_client', { visibility: 'PUBLIC', name: 'Typed' });
    expect(put).toMatchObject({
      outcome: 'created',
      board: { updatedBy: runtime.provisioning.principalArn },
    });
    expect(
      (await api.putBoard('org_client', 'board_client', { visibility: 'PUBLIC', name: 'Typed' })).outcome,
    ).toBe('unchanged');
    expect(await api.putMember('org_client', 'client-member')).toMatchObject({ outcome: 'created' });
    expect((await api.listMembers('org_client')).members).toEqual(['client-member']);
    expect((await api.listBoards('org_client')).map((board) => board.boardId)).toEqual(['board_client']);
    expect(await api.removeMember('org_client', 'client-member', { endSessions: true })).toMatchObject({
      removed: true,
      sessionsEndedAt: expect.any(String),
    });
  });

  it('throws the API’s refusal of wrong credentials as an EmbedSessionError', async () => {
    const api = createClient({
      baseUrl: runtime.baseUrl,
      aws: {
        region: runtime.provisioning.region,
        credentials: { accessKeyId: runtime.provisioning.accessKeyId, secretAccessKey: 'wrong' },
      },
      maxRetries: 0,
    });
    const error = await api.listMembers('org_client').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedSessionError);
    expect((error as EmbedSessionError).status).toBe(403);
  });
});
