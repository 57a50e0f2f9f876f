import type { WorkspaceMembership } from '../../domain/people.js';
import type { Label } from '../../domain/labels.js';
import { maxCommentLength, taskRefText, type TaskComment, type TaskPageData, type TaskRef } from '../../domain/task-page.js';
import { html, type SafeHtml } from './escape.js';
import { labelChip } from './label-chip.js';
import { csrfField, layout, type Viewer } from './layout.js';
import { richText } from './rich-text.js';
import { when } from './settings.js';
import { taskLabelsEditor } from './task-labels.js';

export type TaskPageNotice = 'comment-added' | undefined;

export const taskPath = (workspace: WorkspaceMembership, ref: TaskRef): string => `/${workspace.urlId}/task/${taskRefText(ref)}`;
export const commentsPath = (workspace: WorkspaceMembership, ref: TaskRef): string => `${taskPath(workspace, ref)}/comments`;

/**
 * A colour swatch. The CSP allows no inline styles, so the colour is an SVG presentation attribute
 * (`fill`), and the text beside it stays dark on the light chip: the contrast never depends on the colour.
 */
function swatch(color: string): SafeHtml {
  const fill = /^#[0-9A-Fa-f]{6}$/.test(color) ? color : '#6b7280';
  return html`<svg class="swatch" viewBox="0 0 10 10" width="10" height="10" aria-hidden="true" focusable="false"><circle cx="5" cy="5" r="5" fill="${fill}"/></svg>`;
}

function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/**
 * The task's labels: owners and members get the editor (html/task-labels.ts: remove buttons and an
 * add form of the workspace's other labels); guests, who may not label tasks, the read-only chips.
 */
export function labelsSection(viewer: Viewer, workspace: WorkspaceMembership, data: TaskPageData, workspaceLabels: Label[] | undefined): SafeHtml {
  const labels = data.task.labels;
  if (workspaceLabels) return taskLabelsEditor(viewer, workspace, data.task, labels, workspaceLabels);
  return html`<section class="card" aria-labelledby="labels-title">
  <h2 id="labels-title">Labels</h2>
  ${labels.length === 0 ? html`<p class="hint">No labels.</p>` : html`<ul class="chips" aria-label="Labels on this task">${labels.map((label) => html`<li>${labelChip(label)}</li>`)}</ul>`}
</section>`;
}

function details(data: TaskPageData): SafeHtml {
  const { task, status, section, assignee, project } = data;
  return html`<dl class="facts task-facts">
  <div><dt>Status</dt><dd>${status ? html`<span class="chip">${swatch(status.color)}${status.name}</span>` : html`<span class="hint">None</span>`}</dd></div>
  <div><dt>Completion</dt><dd>${task.isCompleted ? html`<span class="done">✓ Completed</span>` : 'Not completed'}</dd></div>
  <div><dt>Assignee</dt><dd>${assignee ? assignee.name : html`<span class="hint">Unassigned</span>`}</dd></div>
  <div><dt>Section</dt><dd>${section ? section.name : html`<span class="hint">—</span>`}</dd></div>
  <div><dt>Project</dt><dd>${project.name}</dd></div>
  <div><dt>Created</dt><dd>${when(task.createdAt, '—')}</dd></div>
</dl>`;
}

function attachmentsSection(data: TaskPageData): SafeHtml {
  const { attachments } = data;
  let content: SafeHtml;
  if (attachments === undefined) content = html`<p class="error">The attachments could not be loaded just now. Reload the page in a minute.</p>`;
  else if (attachments.length === 0) content = html`<p class="hint">No attachments.</p>`;
  else {
    content = html`<ul class="files">${attachments.map(
      (file) => html`<li><a href="${file.url}" rel="noopener noreferrer">${file.name}</a>
      <span class="hint">${fileSize(file.sizeBytes)} · ${file.contentType} · ${when(file.createdAt, '—')}</span></li>`,
    )}</ul>`;
  }
  return html`<section class="card" aria-labelledby="attachments-title">
  <h2 id="attachments-title">Attachments</h2>
  ${content}
</section>`;
}

function comment(entry: TaskComment, workspace: WorkspaceMembership): SafeHtml {
  return html`<li class="comment" id="comment-${entry.id}">
    <p class="meta"><strong>${entry.authorName}</strong>${entry.authorUserId === workspace.userId ? html` <span class="hint">(you)</span>` : ''} · ${when(entry.createdAt, '—')}</p>
    <div class="rich">${richText(entry.bodyJson)}</div>
  </li>`;
}

export interface CommentFormState {
  error?: string;
  text?: string;
}

function commentForm(viewer: Viewer, workspace: WorkspaceMembership, data: TaskPageData, state: CommentFormState): SafeHtml {
  const { error } = state;
  return html`<form method="post" action="${commentsPath(workspace, data.ref)}" class="stack">
    ${csrfField(viewer.csrfToken)}
    <label for="comment-text">Add a comment</label>
    <p class="hint" id="comment-text-hint">Markdown works: # headings, - lists, 1. numbered lists, **bold**, *italic*, \`code\`, &gt; quotes. Up to ${maxCommentLength.toLocaleString('en')} characters.</p>
    ${error ? html`<p class="error" id="comment-text-error">${error}</p>` : ''}
    <textarea id="comment-text" name="text" rows="4" required maxlength="${maxCommentLength}"
      aria-describedby="comment-text-hint${error ? ' comment-text-error' : ''}"${error ? html` aria-invalid="true" autofocus` : ''}>${state.text ?? ''}</textarea>
    <p><button type="submit" class="button">Add comment</button></p>
  </form>`;
}

function commentsSection(viewer: Viewer, workspace: WorkspaceMembership, data: TaskPageData, state: CommentFormState): SafeHtml {
  const { list, truncated } = data.comments;
  return html`<section class="card" id="comments" aria-labelledby="comments-title">
  <h2 id="comments-title">Comments <span class="sub">(${list.length}${truncated ? '+' : ''})</span></h2>
  ${truncated ? html`<p class="hint">Only the ${list.length} newest comments are shown.</p>` : ''}
  ${list.length === 0 ? html`<p class="hint">No comments yet.</p>` : html`<ol class="comments">${list.map((entry) => comment(entry, workspace))}</ol>`}
  ${commentForm(viewer, workspace, data, state)}
</section>`;
}

/** The task page: its facts, labels, description, attachments and comments (with the add form). */
export function taskPage(
  viewer: Viewer,
  workspace: WorkspaceMembership,
  data: TaskPageData,
  options: { notice?: TaskPageNotice; comment?: CommentFormState; workspaceLabels?: Label[] } = {},
): SafeHtml {
  const ref = taskRefText(data.ref);
  return layout({
    title: `${ref} ${data.task.name} · ${workspace.name}`,
    viewer: { ...viewer, current: workspace.urlId },
    body: html`<nav aria-label="Breadcrumb" class="crumbs">${workspace.name} › ${data.project.name} › <span aria-current="page">${ref}</span></nav>
<h1>${data.task.name} <span class="sub mono">${ref}</span></h1>
${options.notice === 'comment-added' ? html`<p class="notice" role="status">Your comment was added.</p>` : ''}
<section class="card" aria-labelledby="details-title">
  <h2 id="details-title" class="visually-hidden">Details</h2>
  ${details(data)}
</section>
${labelsSection(viewer, workspace, data, options.workspaceLabels)}
<section class="card" aria-labelledby="description-title">
  <h2 id="description-title">Description</h2>
  ${data.task.descriptionJson ? html`<div class="rich">${richText(data.task.descriptionJson)}</div>` : html`<p class="hint">No description.</p>`}
</section>
${attachmentsSection(data)}
${commentsSection(viewer, workspace, data, options.comment ?? {})}`,
  });
}
