import { maxEmailLength, roleOptions, type MemberRow } from '../../domain/members.js';
import type { Role, WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';
import { csrfField, layout, type Viewer } from './layout.js';
import { breadcrumbs, inWorkspace, settingsPath, when } from './settings.js';

export const membersNotices = ['added', 'changed', 'removed'] as const;
export type MembersNotice = (typeof membersNotices)[number] | undefined;

export const membersPath = (workspace: WorkspaceMembership): string => `${settingsPath(workspace)}/members`;
export const memberPath = (workspace: WorkspaceMembership, userId: string): string => `${membersPath(workspace)}/${encodeURIComponent(userId)}`;

const roleLabels: Record<Role, string> = { owner: 'Owner', member: 'Member', guest: 'Guest' };

const noticeText: Record<Exclude<MembersNotice, undefined>, string> = {
  added: 'The member was added. They can sign in with that email address now.',
  changed: 'The role was changed. It applies to their very next request.',
  removed: 'The member was removed. Their API keys and sessions stopped working in this workspace, and their tasks are unassigned.',
};

export interface AddFormState {
  message: string;
  email: string;
  role: Role;
}

function roleSelect(id: string, selected: Role, describedBy?: string): SafeHtml {
  return html`<select id="${id}" name="role"${describedBy ? html` aria-describedby="${describedBy}"` : ''}>
    ${roleOptions.map((role) => html`<option value="${role}"${role === selected ? html` selected` : ''}>${roleLabels[role]}</option>`)}
  </select>`;
}

function addForm(viewer: Viewer, workspace: WorkspaceMembership, error?: AddFormState): SafeHtml {
  return html`<section class="card" aria-labelledby="add-title">
  <h2 id="add-title">Add a member</h2>
  <form method="post" action="${membersPath(workspace)}" class="stack">
    ${csrfField(viewer.csrfToken)}
    <label for="member-email">Email address</label>
    <p class="hint" id="member-email-hint">The address they sign in with at your identity provider.</p>
    ${error ? html`<p class="error" id="member-email-error">${error.message}</p>` : ''}
    <input id="member-email" name="email" type="email" required maxlength="${maxEmailLength}" autocomplete="off" spellcheck="false"
      aria-describedby="member-email-hint${error ? ' member-email-error' : ''}"${error ? html` aria-invalid="true" autofocus` : ''} value="${error?.email ?? ''}">
    <label for="member-role">Role</label>
    <p class="hint" id="member-role-hint">Owners manage the workspace and its members; members work in it and create API keys; guests can look but not manage anything.</p>
    ${roleSelect('member-role', error?.role ?? 'member', 'member-role-hint')}
    <p><button type="submit" class="button">Add member</button></p>
  </form>
</section>`;
}

function ownerActions(viewer: Viewer, workspace: WorkspaceMembership, member: MemberRow): { role: SafeHtml; remove: SafeHtml } {
  const who = `${member.name} (${member.email})`;
  const selectId = `role-${member.userId}`;
  return {
    role: html`<form method="post" action="${memberPath(workspace, member.userId)}/role" class="role-change">${csrfField(viewer.csrfToken)}
      <label class="visually-hidden" for="${selectId}">Role of ${who}</label>${roleSelect(selectId, member.role)}
      <button type="submit" class="button" aria-label="Change the role of ${who}">Change</button></form>`,
    remove: html`<form method="post" action="${memberPath(workspace, member.userId)}/remove" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Remove ${who} from the workspace" aria-describedby="remove-consequence">Remove</button></form>`,
  };
}

function memberTable(viewer: Viewer, workspace: WorkspaceMembership, members: MemberRow[]): SafeHtml {
  const owner = workspace.role === 'owner';
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">Members of ${workspace.name}</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th>${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
  <tbody>
  ${members.map((member) => {
    const actions = owner ? ownerActions(viewer, workspace, member) : undefined;
    return html`<tr>
    <th scope="row">${member.name}${member.userId === workspace.userId ? html` <span class="hint">(you)</span>` : ''}</th>
    <td data-label="Email">${member.email}</td>
    <td data-label="Role">${actions ? actions.role : roleLabels[member.role]}</td>
    <td data-label="Joined">${when(member.joinedAt, '—')}</td>
    ${actions ? html`<td>${actions.remove}</td>` : ''}
  </tr>`;
  })}
  </tbody>
</table></div>`;
}

/** The members of a workspace: the list for owners and members; owners also add, change roles and remove. */
export function membersPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  listed: { members: MemberRow[]; truncated: boolean },
  options: { notice?: MembersNotice; error?: AddFormState } = {},
): SafeHtml {
  const owner = workspace.role === 'owner';
  return layout({
    title: `Members · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    body: html`${breadcrumbs(workspace, 'Members')}
<h1>Members <span class="sub">${workspace.name}</span></h1>
${options.notice ? html`<p class="notice" role="status">${noticeText[options.notice]}</p>` : ''}
<p>${owner ? 'As an owner you add people by email, change their role and remove them. A workspace always keeps at least one owner.' : 'Only owners can add, change or remove members; ask one of them for a change.'}</p>
${owner ? addForm(viewer, workspace, options.error) : ''}
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Members of this workspace</h2>
  ${owner ? html`<p class="hint" id="remove-consequence">Removing someone ends their access at once: their API keys stop working, their sessions lose this workspace, and their tasks become unassigned. Making someone a guest revokes their API keys.</p>` : ''}
  ${memberTable(viewer, workspace, listed.members)}
  ${listed.truncated ? html`<p class="hint">Only the first ${listed.members.length} members are shown.</p>` : ''}
</section>`,
  });
}
