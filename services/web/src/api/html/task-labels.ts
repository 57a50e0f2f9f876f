import { labelBounds, type Label } from '../../domain/labels.js';
import type { WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';
import { labelChip } from './label-chip.js';
import { csrfField, type Viewer } from './layout.js';

/** Where the task page's label forms post (api/labels.ts answers each with a 303 back to the task). */
export const taskLabelsPath = (workspace: Pick<WorkspaceMembership, 'urlId'>, taskId: string): string => `/${workspace.urlId}/tasks/${taskId}/labels`;

const byName = (a: Label, b: Label): number => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || (a.id < b.id ? -1 : 1);

/**
 * The labels of a task, editable (for the task page; guests get the read-only chips instead): each
 * label as a chip with a remove button, and a select-and-add form of the workspace's other labels.
 * Works without JavaScript: every button posts a form with the session's CSRF field.
 */
export function taskLabelsEditor(viewer: Viewer, workspace: WorkspaceMembership, task: { id: string }, onTask: Label[], all: Label[]): SafeHtml {
  const carried = new Set(onTask.map((label) => label.id));
  const addable = all.filter((label) => !carried.has(label.id)).sort(byName);
  const path = taskLabelsPath(workspace, task.id);
  const full = onTask.length >= labelBounds.perTask;
  return html`<section class="card task-labels" aria-labelledby="task-labels-title">
  <h2 id="task-labels-title">Labels</h2>
  ${onTask.length === 0
    ? html`<p class="hint">No labels yet.</p>`
    : html`<ul class="chips" aria-label="Labels on this task">
    ${[...onTask].sort(byName).map(
      (label) => html`<li>${labelChip(label)}<form method="post" action="${path}/${label.id}/remove" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="chip-remove" aria-label="Remove the label ${label.name} from this task" title="Remove ${label.name}">×</button></form></li>`,
    )}
  </ul>`}
  ${full
    ? html`<p class="hint">A task carries at most ${labelBounds.perTask} labels: remove one to add another.</p>`
    : addable.length === 0
      ? html`<p class="hint">${all.length === 0 ? 'This workspace has no labels yet.' : 'Every label of the workspace is on this task.'} <a href="/${workspace.urlId}/settings/labels">Manage labels</a></p>`
      : html`<form method="post" action="${path}" class="label-row">
    ${csrfField(viewer.csrfToken)}
    <p><label for="add-label">Add a label</label>
    <select id="add-label" name="labelId" required>
      ${addable.map((label) => html`<option value="${label.id}">${label.name}</option>`)}
    </select></p>
    <p><button type="submit" class="secondary">Add label</button></p>
  </form>
  <p class="hint"><a href="/${workspace.urlId}/settings/labels">Manage labels</a></p>`}
</section>`;
}
