import type { KeyOwner } from '#lib/domain/api-key';
import type {
  BoardRepository,
  MembershipRepository,
  SessionPosition,
  SessionRef,
  SessionRepository,
  SessionScope,
} from '#lib/domain/ports';
import type { StoredSession } from '#lib/domain/session';

/**
 * Who may see and revoke a session: a member of the organization that owns its board, or the key owner
 * who created it (with any of its keys). Membership is read consistently, so losing it loses access at once.
 */
export async function canAccess(
  memberships: MembershipRepository,
  caller: KeyOwner,
  session: StoredSession,
): Promise<boolean> {
  if (session.createdByUserId !== '' && session.createdByUserId === caller.userId) return true;
  return session.orgId !== '' && (await memberships.isMember(session.orgId, caller.userId));
}

/** Which sessions a query names: those of an external user, those on a board, or both at once. */
export interface SessionSelector {
  userId?: string;
  boardId?: string;
}

/**
 * The index scopes holding exactly the selected sessions the caller may access. On a board whose
 * organization the caller belongs to, every session is accessible; elsewhere only those it created. For
 * a user across boards, one scope per organization of the caller plus the ones it created; a session in
 * both is merged once.
 */
export async function scopesFor(
  deps: { boards: BoardRepository; memberships: MembershipRepository },
  caller: KeyOwner,
  selector: SessionSelector,
): Promise<SessionScope[]> {
  const { userId, boardId } = selector;
  if (boardId !== undefined) {
    const orgId = (await deps.boards.get(boardId))?.orgId ?? '';
    const member = orgId !== '' && (await deps.memberships.isMember(orgId, caller.userId));
    if (userId !== undefined) {
      return member
        ? [{ by: 'orgUser', orgId, userId, boardId }]
        : [{ by: 'creatorUser', creatorUserId: caller.userId, userId, boardId }];
    }
    return member
      ? [{ by: 'board', boardId }]
      : [{ by: 'creatorBoard', creatorUserId: caller.userId, boardId }];
  }
  if (userId === undefined) throw new Error('scopesFor needs a userId or a boardId');
  const orgs = await deps.memberships.orgsOf(caller.userId);
  return [
    ...orgs.map((orgId): SessionScope => ({ by: 'orgUser', orgId, userId })),
    { by: 'creatorUser', creatorUserId: caller.userId, userId },
  ];
}

interface ScopeState {
  scope: SessionScope;
  buffer: SessionRef[];
  /** Where the next page of this scope starts (exclusive); undefined before the first read. */
  below: SessionPosition | undefined;
  done: boolean;
}

/**
 * The sessions of several scopes as one newest-first stream, read page by page only as far as it is
 * consumed. A session present in two scopes (its creator is also a member) comes out once: positions are
 * unique per session, so equal heads are the same session.
 */
export class ScopeMerge {
  private readonly states: ScopeState[];
  private last: SessionPosition | undefined;

  constructor(
    private readonly sessions: SessionRepository,
    scopes: readonly SessionScope[],
    below: SessionPosition | undefined,
    private readonly pageSize: number,
  ) {
    this.states = scopes.map((scope) => ({ scope, buffer: [], below, done: false }));
  }

  /** The next session, or undefined when every scope is exhausted. */
  async next(): Promise<SessionRef | undefined> {
    for (;;) {
      const head = await this.head();
      if (!head) return undefined;
      const ref = head.buffer.shift() as SessionRef;
      if (ref.position === this.last) continue;
      this.last = ref.position;
      return ref;
    }
  }

  /** True while at least one more session may follow. */
  async hasMore(): Promise<boolean> {
    for (;;) {
      const head = await this.head();
      if (!head) return false;
      if (head.buffer[0]?.position !== this.last) return true;
      head.buffer.shift();
    }
  }

  /** The scope whose next session is the newest, after filling every empty buffer that can be filled. */
  private async head(): Promise<ScopeState | undefined> {
    await Promise.all(this.states.map((state) => this.fill(state)));
    let best: ScopeState | undefined;
    for (const state of this.states) {
      const candidate = state.buffer[0];
      if (candidate && (!best || candidate.position > (best.buffer[0] as SessionRef).position)) best = state;
    }
    return best;
  }

  private async fill(state: ScopeState): Promise<void> {
    // A filtered page can be empty and still have more after it.
    while (state.buffer.length === 0 && !state.done) {
      const page = await this.sessions.scanScope(state.scope, {
        ...(state.below !== undefined ? { below: state.below } : {}),
        limit: this.pageSize,
      });
      state.buffer = page.refs;
      state.below = page.next;
      state.done = page.next === undefined;
    }
  }
}
