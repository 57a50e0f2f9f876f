import { describe, expect, it } from 'vitest';
import type { WorkspaceMembership } from '../../domain/people.js';
import { labelsPage } from './labels.js';
import type { Viewer } from './layout.js';
import { taskLabelsEditor } from './task-labels.js';

const workspace: WorkspaceMembership = { workspaceId: 'w1', urlId: 'acme', name: 'Acme <b>', userId: 'u1', role: 'member' };
const viewer: Viewer = { email: 'm@example.com', csrfToken: 'tok"en', workspaces: [workspace] };
const bug = { id: '11111111-1111-4111-8111-111111111111', name: 'bug <i>', color: '#B91C1C' };
const idea = { id: '22222222-2222-4222-8222-222222222222', name: 'Idea', color: '#FDE047' };
const chore = { id: '33333333-3333-4333-8333-333333333333', name: 'chore', color: '#0000FF' };

describe('the task labels editor', () => {
  it('shows each label as a chip with a remove form, and a select of the others', () => {
    const out = taskLabelsEditor(viewer, workspace, { id: 't1' }, [bug], [bug, idea, chore]).value;
    expect(out).toContain('action="/acme/tasks/t1/labels/11111111-1111-4111-8111-111111111111/remove"');
    expect(out).toContain('aria-label="Remove the label bug &lt;i&gt; from this task"');
    expect(out).toContain('<span class="chip chip-light">');
    expect(out).toContain('action="/acme/tasks/t1/labels"');
    expect(out).toContain('<label for="add-label">Add a label</label>');
    // The others, by name, without the one already on the task.
    expect(out.indexOf('>chore</option>')).toBeLessThan(out.indexOf('>Idea</option>'));
    expect(out).not.toContain(`<option value="${bug.id}"`);
    expect(out.match(/name="_csrf" value="tok&quot;en"/g)).toHaveLength(2);
    expect(out).not.toContain('<i>');
  });

  it('says what to do when there is nothing to add, and at the bound', () => {
    expect(taskLabelsEditor(viewer, workspace, { id: 't1' }, [], []).value).toContain('This workspace has no labels yet.');
    expect(taskLabelsEditor(viewer, workspace, { id: 't1' }, [idea], [idea]).value).toContain('Every label of the workspace is on this task.');
    const many = Array.from({ length: 20 }, (_, index) => ({ id: `id-${index}`, name: `l${index}`, color: '#FFFFFF' }));
    const full = taskLabelsEditor(viewer, workspace, { id: 't1' }, many, [...many, chore]).value;
    expect(full).toContain('A task carries at most 20 labels');
    expect(full).not.toContain('<select');
  });
});

describe('the labels page', () => {
  it('lists labels with task counts, a rename/recolour form and a delete sentence per label', () => {
    const out = labelsPage(viewer, workspace, [{ ...bug, taskCount: 3 }, { ...idea, taskCount: 0 }], { notice: 'deleted' }).value;
    expect(out).toContain('<td data-label="Tasks" class="nowrap">3 tasks</td>');
    expect(out).toContain('Deleting it takes it off the 3 tasks that carry it.');
    expect(out).toContain('No task carries it.');
    expect(out).toContain('value="#b91c1c"');
    expect(out).toContain(`action="/acme/settings/labels/${bug.id}/delete"`);
    expect(out).toContain('role="status"');
    expect(out).toContain('Acme &lt;b&gt;');
  });

  it('shows a refused form again with the sentence at its field', () => {
    const created = labelsPage(viewer, workspace, [], { error: { message: 'Taken.', name: 'x"y', color: '#00ff00' } }).value;
    expect(created).toContain('<p class="error" id="label-name-error">Taken.</p>');
    expect(created).toContain('value="x&quot;y"');
    const renamed = labelsPage(viewer, workspace, [{ ...bug, taskCount: 0 }], { error: { id: bug.id, message: 'Too long.', name: 'n', color: '#00ff00' } }).value;
    expect(renamed).toContain(`<p class="error" id="error-${bug.id}">Too long.</p>`);
    expect(renamed).not.toContain('label-name-error');
  });
});
