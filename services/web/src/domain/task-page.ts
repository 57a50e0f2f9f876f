import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { Attachment__Output } from '@tws/proto-types/generated/attachments/v1/Attachment';
import type { AttachmentsApi } from '../clients/attachments.js';
import type { TaskPageApi } from '../clients/tasks.js';
import { notFoundError } from '../plugins/errors.js';
import { sentences, UserFacingError } from './errors.js';
import { acting, type WorkspaceMembership } from './people.js';

/** A task reference of a task URL, `{taskPrefix}-{number}`, as parsed. */
export interface TaskRef {
  prefix: string;
  number: number;
}

/** The longest comment the page accepts (the API takes more; a form post is bounded: BODY limit of its route). */
export const maxCommentLength = 10_000;

const refPattern = /^([A-Za-z][A-Za-z0-9]{0,19})-([1-9][0-9]{0,9})$/;

/** `ABC-12` → its prefix (upper-cased) and number; undefined for anything else (the 404 page). */
export function parseTaskRef(ref: string): TaskRef | undefined {
  const match = refPattern.exec(ref);
  if (!match) return undefined;
  const number = Number(match[2]);
  if (!Number.isSafeInteger(number) || number > 2_147_483_647) return undefined;
  return { prefix: match[1]!.toUpperCase(), number };
}

export const taskRefText = (ref: TaskRef): string => `${ref.prefix}-${ref.number}`;

export interface TaskLabel {
  id: string;
  name: string;
  color: string;
}

export interface TaskComment {
  id: string;
  authorName: string;
  authorUserId: string | undefined;
  createdAt: string;
  bodyJson: string;
}

export interface TaskAttachment {
  id: string;
  name: string;
  contentType: string;
  sizeBytes: number;
  createdAt: string;
  /** The permanent download URL, exactly as the API hands it out. */
  url: string;
}

/** Everything the task page shows, fetched in two parallel rounds. */
export interface TaskPageData {
  ref: TaskRef;
  task: {
    id: string;
    number: number;
    name: string;
    isCompleted: boolean;
    descriptionJson: string | undefined;
    createdAt: string;
    labels: TaskLabel[];
  };
  project: { id: string; name: string; taskPrefix: string };
  status: { name: string; color: string; systemType: string | undefined } | undefined;
  section: { name: string } | undefined;
  assignee: { name: string; userId: string } | undefined;
  comments: { list: TaskComment[]; truncated: boolean };
  /** Undefined when the attachments service could not be reached (the page says so). */
  attachments: TaskAttachment[] | undefined;
}

/**
 * The permanent download URL of an attachment, built exactly as the gateway builds it
 * (services/gateway/src/api/attachments/schemas.ts `downloadUrl`) from the API's public base URL.
 */
export function attachmentDownloadUrl(apiBaseUrl: string, attachment: Pick<Attachment__Output, 'id' | 'downloadToken'>): string {
  return `${apiBaseUrl}/v1/attachments/${encodeURIComponent(attachment.id)}/content?token=${encodeURIComponent(attachment.downloadToken)}`;
}


/** A refused comment, shown at the form's field. */
export class CommentRefused extends Error {
  override readonly name = 'CommentRefused';
}

/**
 * The task page as the signed-in person reads it. The tasks service decides (TaskPageService: a
 * person who is not a member and a task that does not exist are the same NOT_FOUND); every
 * NOT_FOUND here is the app's one 404 page, so a task address reveals nothing.
 */
export class TaskPages {
  constructor(
    private readonly tasks: TaskPageApi,
    private readonly attachments: AttachmentsApi,
    private readonly apiBaseUrl: string,
  ) {}

  async load(workspace: WorkspaceMembership, ref: TaskRef): Promise<TaskPageData> {
    try {
      // Round 1: the task, and what needs only the workspace.
      const [found, statuses, members] = await Promise.all([
        this.tasks.GetTaskByNumber({ acting: acting(workspace), taskPrefix: ref.prefix, number: ref.number }),
        this.tasks.ListStatuses({ workspaceId: workspace.workspaceId }),
        this.tasks.ListMembers({ workspaceId: workspace.workspaceId }),
      ]);
      const task = found.task;
      const project = found.project;
      if (!task || !project) throw new Error('GetTaskByNumber answered without the task');
      // Round 2: what needs the task.
      const [sections, comments, attachments] = await Promise.all([
        this.tasks.ListSections({ workspaceId: workspace.workspaceId, projectId: project.id }),
        this.tasks.ListComments({ acting: acting(workspace), taskId: task.id }),
        this.attachments.ListTaskAttachments({ workspaceId: workspace.workspaceId, taskId: task.id }).then(
          (response) => response.attachments,
          () => undefined,
        ),
      ]);
      const status = statuses.statuses.find((candidate) => candidate.id === task.statusId);
      const section = sections.sections.find((candidate) => candidate.id === task.listId);
      const assignee = task.assigneeId ? members.members.find((member) => member.userId === task.assigneeId) : undefined;
      return {
        ref,
        task: {
          id: task.id,
          number: task.number,
          name: task.name,
          isCompleted: task.isCompleted,
          descriptionJson: task.descriptionJson ?? undefined,
          createdAt: task.createdAt,
          labels: task.labels.map((label) => ({ id: label.id, name: label.name, color: label.color })),
        },
        project: { id: project.id, name: project.name, taskPrefix: project.taskPrefix },
        status: status ? { name: status.name, color: status.color, systemType: status.systemType ?? undefined } : undefined,
        section: section ? { name: section.name } : undefined,
        assignee: assignee ? { name: assignee.name, userId: assignee.userId } : undefined,
        comments: {
          list: comments.comments.map((comment) => ({
            id: comment.id,
            authorName: comment.authorName,
            authorUserId: comment.authorUserId ?? undefined,
            createdAt: comment.createdAt,
            bodyJson: comment.bodyJson,
          })),
          truncated: comments.truncated,
        },
        attachments: attachments?.map((attachment) => ({
          id: attachment.id,
          name: attachment.name,
          contentType: attachment.contentType,
          sizeBytes: Number(attachment.sizeBytes),
          createdAt: attachment.createdAt,
          url: attachmentDownloadUrl(this.apiBaseUrl, attachment),
        })),
      };
    } catch (error) {
      throw refusal(error, 'This task could not be loaded just now.');
    }
  }

  /** Adds a comment attributed to the signed-in person (TasksService.CreateComment, actor = their user id). */
  async addComment(workspace: WorkspaceMembership, ref: TaskRef, text: string): Promise<void> {
    try {
      const found = await this.tasks.GetTaskByNumber({ acting: acting(workspace), taskPrefix: ref.prefix, number: ref.number });
      if (!found.task) throw new Error('GetTaskByNumber answered without the task');
      await this.tasks.CreateComment({ workspaceId: workspace.workspaceId, taskId: found.task.id, text, actor: { userId: workspace.userId } });
    } catch (error) {
      if (isGrpcError(error) && error.code === GrpcStatus.INVALID_ARGUMENT) {
        throw new CommentRefused(`The comment was not accepted (${error.details}). Shorten or simplify it, then add it again.`);
      }
      throw refusal(error, 'The comment could not be added just now.');
    }
  }
}

/** A failure as a page: not found (or not a member) is the one 404; the rest says to try again. */
function refusal(error: unknown, unavailable: string): UserFacingError {
  if (isGrpcError(error) && (error.code === GrpcStatus.NOT_FOUND || error.code === GrpcStatus.PERMISSION_DENIED)) return notFoundError();
  return new UserFacingError(503, 'Task unavailable', `${unavailable} ${sentences.tryAgainLater}`, {}, { cause: error });
}
