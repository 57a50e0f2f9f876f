import { labelBounds, type LabelRow } from '../../domain/labels.js';
import type { WorkspaceMembership } from '../../domain/people.js';
import { html, type SafeHtml } from './escape.js';
import { labelChip } from './label-chip.js';
import { csrfField, layout, type Viewer } from './layout.js';

export type LabelsNotice = 'created' | 'updated' | 'deleted' | undefined;

/** What was sent in a form that is shown again with a sentence at its field. */
export interface LabelFormError {
  /** The label the row form was for; absent: the create form. */
  id?: string;
  message: string;
  name: string;
  color: string;
}

export const defaultLabelColor = '#1D4ED8';

const inWorkspace = (viewer: Viewer, workspace: WorkspaceMembership): Viewer => ({ ...viewer, current: workspace.urlId });
export const labelsPath = (workspace: WorkspaceMembership): string => `/${workspace.urlId}/settings/labels`;

const notices: Record<Exclude<LabelsNotice, undefined>, string> = {
  created: 'The label was created. Put it on tasks from their pages.',
  updated: 'The label was changed. Every task carrying it shows the change.',
  deleted: 'The label was deleted and taken off every task that carried it.',
};

const tasksText = (count: number): string => (count === 1 ? '1 task' : `${count} tasks`);

/** What deleting does to the tasks carrying the label. */
const deleteSentence = (count: number): string =>
  count === 0 ? 'No task carries it.' : count === 1 ? 'Deleting it takes it off the 1 task that carries it.' : `Deleting it takes it off the ${count} tasks that carry it.`;

function createForm(viewer: Viewer, workspace: WorkspaceMembership, error: LabelFormError | undefined): SafeHtml {
  return html`<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a label</h2>
  <form method="post" action="${labelsPath(workspace)}" class="stack">
    ${csrfField(viewer.csrfToken)}
    <div class="label-row">
      <p><label for="label-name">Name</label>
      <input id="label-name" name="name" type="text" required maxlength="${labelBounds.nameLength}" autocomplete="off"
        aria-describedby="label-name-hint${error ? ' label-name-error' : ''}"${error ? html` aria-invalid="true" autofocus` : ''} value="${error?.name ?? ''}"></p>
      <p><label for="label-color">Colour</label>
      <input id="label-color" name="color" type="color" value="${error?.color ?? defaultLabelColor}"></p>
      <p><button type="submit" class="button">Create label</button></p>
    </div>
    <p class="hint" id="label-name-hint">1 to ${labelBounds.nameLength} characters, different from the workspace's other labels. A workspace has at most ${labelBounds.perWorkspace} labels.</p>
    ${error ? html`<p class="error" id="label-name-error">${error.message}</p>` : ''}
  </form>
</section>`;
}

function labelRow(viewer: Viewer, workspace: WorkspaceMembership, label: LabelRow, error: LabelFormError | undefined): SafeHtml {
  const rowError = error?.id === label.id ? error : undefined;
  const nameId = `name-${label.id}`;
  return html`<tr>
    <th scope="row" class="label-cell">${labelChip(label)}</th>
    <td data-label="Tasks" class="nowrap">${tasksText(label.taskCount)}</td>
    <td>
      <form method="post" action="${labelsPath(workspace)}/${label.id}" class="label-row">
        ${csrfField(viewer.csrfToken)}
        <p><label for="${nameId}">Name<span class="visually-hidden"> of ${label.name}</span></label>
        <input id="${nameId}" name="name" type="text" required maxlength="${labelBounds.nameLength}" autocomplete="off" value="${rowError?.name ?? label.name}"${rowError ? html` aria-invalid="true" aria-describedby="error-${label.id}" autofocus` : ''}></p>
        <p><label for="color-${label.id}">Colour<span class="visually-hidden"> of ${label.name}</span></label>
        <input id="color-${label.id}" name="color" type="color" value="${rowError?.color ?? label.color.toLowerCase()}"></p>
        <p><button type="submit" class="secondary" aria-label="Save the name and colour of ${label.name}">Save</button></p>
      </form>
      ${rowError ? html`<p class="error" id="error-${label.id}">${rowError.message}</p>` : ''}
    </td>
    <td>
      <form method="post" action="${labelsPath(workspace)}/${label.id}/delete" class="inline">${csrfField(viewer.csrfToken)}<button type="submit" class="danger" aria-label="Delete the label ${label.name}" aria-describedby="delete-${label.id}">Delete</button></form>
      <p class="hint" id="delete-${label.id}">${deleteSentence(label.taskCount)}</p>
    </td>
  </tr>`;
}

function labelTable(viewer: Viewer, workspace: WorkspaceMembership, labels: LabelRow[], error: LabelFormError | undefined): SafeHtml {
  if (labels.length === 0) return html`<p>This workspace has no labels yet. Create the first one above.</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">Labels</caption>
  <thead><tr><th scope="col">Label</th><th scope="col">Tasks</th><th scope="col">Rename or recolour</th><th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead>
  <tbody>
  ${labels.map((label) => labelRow(viewer, workspace, label, error))}
  </tbody>
</table></div>`;
}

/** The labels of a workspace (owners and members): the list with a form per label, and the create form. */
export function labelsPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  labels: LabelRow[],
  options: { notice?: LabelsNotice; error?: LabelFormError } = {},
): SafeHtml {
  const createError = options.error && options.error.id === undefined ? options.error : undefined;
  return layout({
    title: `Labels · ${workspace.name}`,
    viewer: inWorkspace(viewer, workspace),
    body: html`<nav aria-label="Breadcrumb" class="crumbs"><a href="/${workspace.urlId}/settings">Settings</a> › <span aria-current="page">Labels</span></nav>
<h1>Labels <span class="sub">${workspace.name}</span></h1>
${options.notice ? html`<p class="notice" role="status">${notices[options.notice]}</p>` : ''}
<p>Labels sort tasks across projects. Put them on a task from its page (at most ${labelBounds.perTask} per task); the API shows them in each task's <code>labels</code>.
Renaming, recolouring or deleting a label changes every task that carries it, and each of those tasks sends a <code>task.updated</code> webhook.</p>
${createForm(viewer, workspace, createError)}
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Labels of this workspace</h2>
  ${labelTable(viewer, workspace, labels, options.error?.id === undefined ? undefined : options.error)}
</section>`,
  });
}
