import { describe, expect, it } from 'vitest';
import type { MemberRow } from '../../domain/members.js';
import type { WorkspaceMembership } from '../../domain/people.js';
import { membersPage } from './members.js';

const workspace = (role: WorkspaceMembership['role']): WorkspaceMembership => ({ workspaceId: 'w1', urlId: 'acme', name: 'Acme <Inc>', userId: 'u-me', role });
const viewer = (ws: WorkspaceMembership) => ({ email: 'me@example.com', csrfToken: 'csrf-token', workspaces: [ws] });
const rows: MemberRow[] = [
  { userId: 'u-me', name: 'Me', email: 'me@example.com', role: 'owner', joinedAt: '2026-01-02T03:04:05.000Z' },
  { userId: 'u-2', name: '<img src=x onerror=alert(1)>', email: 'x@example.com', role: 'guest', joinedAt: '2026-01-03T00:00:00.000Z' },
];

describe('the members page', () => {
  it('gives owners the add form, a role form and a remove button per row, each with the CSRF field, labels and the consequence', () => {
    const ws = workspace('owner');
    const page = String(membersPage(viewer(ws), ws, { members: rows, truncated: false }));
    expect(page).toContain('<form method="post" action="/acme/settings/members" class="stack">');
    expect(page).toContain('<label for="member-email">Email address</label>');
    expect(page).toContain('action="/acme/settings/members/u-2/role"');
    expect(page).toContain('action="/acme/settings/members/u-2/remove"');
    expect(page.match(/name="_csrf" value="csrf-token"/g)?.length).toBe(1 + 1 + 2 * rows.length);
    expect(page).toContain('aria-describedby="remove-consequence"');
    expect(page).toContain('their API keys stop working');
    expect(page).toContain('<option value="guest" selected>Guest</option>');
    expect(page).toContain('<td data-label="Email">x@example.com</td>');
    expect(page).toContain('<time datetime="2026-01-02T03:04:05.000Z">2026-01-02 03:04 UTC</time>');
    expect(page).toContain('Me <span class="hint">(you)</span>');
    // Everything is escaped.
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).toContain('Acme &lt;Inc&gt;');
  });

  it('gives members the list only', () => {
    const ws = workspace('member');
    const page = String(membersPage(viewer(ws), ws, { members: rows, truncated: true }));
    expect(page).not.toContain('/settings/members/u-2/');
    expect(page).not.toContain('id="member-email"');
    expect(page).toContain('<td data-label="Role">Guest</td>');
    expect(page).toContain('Only owners can add, change or remove members');
    expect(page).toContain('Only the first 2 members are shown.');
  });

  it('shows a refused address at its field, kept, with the chosen role', () => {
    const ws = workspace('owner');
    const page = String(
      membersPage(viewer(ws), ws, { members: rows, truncated: false }, { error: { message: 'x@example.com is already a member', email: 'x@example.com', role: 'guest' } }),
    );
    expect(page).toContain('<p class="error" id="member-email-error">x@example.com is already a member</p>');
    expect(page).toMatch(/aria-describedby="member-email-hint member-email-error" aria-invalid="true" autofocus value="x@example.com"/);
    expect(page).toMatch(/<select id="member-role" name="role" aria-describedby="member-role-hint">\s*<option value="owner">Owner<\/option><option value="member">Member<\/option><option value="guest" selected>Guest<\/option>/);
  });
});
