import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcError } from '@tws/common';
import type { Label__Output } from '@tws/proto-types/generated/tasks/v1/Label';
import type { TaskLabelsChange__Output } from '@tws/proto-types/generated/tasks/v1/TaskLabelsChange';
import type { LabelsApi } from '../clients/tasks.js';
import { sentences, UserFacingError } from './errors.js';
import { acting, type WorkspaceMembership } from './people.js';

/** A label: its id, name and colour `#RRGGBB` (the API's label element). */
export interface Label {
  id: string;
  name: string;
  color: string;
}

export interface LabelRow extends Label {
  /** How many tasks carry it. */
  taskCount: number;
}

/** The bounds the tasks service enforces (proto/tasks/v1/labels.proto), checked here first for a sentence at the field. */
export const labelBounds = { nameLength: 50, perWorkspace: 200, perTask: 20 } as const;

const colorPattern = /^#[0-9A-Fa-f]{6}$/;

/** A form's label name and colour, or the sentence that says what to change. */
export function checkLabelInput(input: { name: string; color: string }): { name: string; color: string } | { problem: string } {
  const name = input.name.trim();
  if (name.length === 0) return { problem: 'Give the label a name, then save it.' };
  const length = [...name].length;
  if (length > labelBounds.nameLength) return { problem: `The name is ${length} characters long; shorten it to at most ${labelBounds.nameLength}.` };
  if (!colorPattern.test(input.color)) return { problem: 'Pick a colour (a value like #1D4ED8), then save it.' };
  return { name, color: input.color.toUpperCase() };
}

export const labelsGuestRefusal = (): UserFacingError =>
  new UserFacingError(
    403,
    'Guests cannot manage labels',
    'Guests cannot create, change or put labels on tasks. Ask an owner or a member of this workspace to do it for you.',
  );

/** A failure the person can correct in the form they sent (shown at the field, the page otherwise kept). */
export class LabelFormProblem extends Error {
  override readonly name = 'LabelFormProblem';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The task after a label was put on it or taken off, with what its address needs. */
export interface TaskLabels {
  changed: boolean;
  /** `{taskPrefix}-{number}`, as in the task's address `/{urlId}/task/{ref}`. */
  ref: string;
  labels: Label[];
}

const toLabel = (label: Label__Output | null): Label => ({ id: label?.id ?? '', name: label?.name ?? '', color: label?.color ?? '#000000' });

const toTaskLabels = (result: TaskLabelsChange__Output | null): TaskLabels => {
  if (!result) throw new Error('the tasks service answered without the task');
  return { changed: result.changed, ref: `${result.taskPrefix}-${result.taskNumber}`, labels: result.labels.map(toLabel) };
};


/**
 * The workspace's labels and the labels on its tasks, as the signed-in person asks
 * tasks.v1.LabelsService. Its rules (owners and members; guests refused; the bounds) are the tasks
 * service's; this maps its refusals to sentences.
 */
export class Labels {
  constructor(private readonly labels: LabelsApi) {}

  async list(workspace: WorkspaceMembership): Promise<LabelRow[]> {
    try {
      const response = await this.labels.ListLabels({ acting: acting(workspace) });
      return response.labels.map((row) => ({ ...toLabel(row.label), taskCount: row.taskCount }));
    } catch (error) {
      throw refusal(error, 'The labels could not be loaded just now.');
    }
  }

  async create(workspace: WorkspaceMembership, input: { name: string; color: string }): Promise<Label> {
    try {
      return toLabel((await this.labels.CreateLabel({ acting: acting(workspace), ...input })).label);
    } catch (error) {
      throw formProblem(error, input.name) ?? refusal(error, 'The label could not be created just now.');
    }
  }

  async update(workspace: WorkspaceMembership, id: string, input: { name: string; color: string }): Promise<Label> {
    try {
      return toLabel((await this.labels.UpdateLabel({ acting: acting(workspace), id, ...input })).label);
    } catch (error) {
      throw formProblem(error, input.name) ?? refusal(error, 'The label could not be changed just now.');
    }
  }

  async delete(workspace: WorkspaceMembership, id: string): Promise<number> {
    try {
      return (await this.labels.DeleteLabel({ acting: acting(workspace), id })).tasksUpdated;
    } catch (error) {
      throw refusal(error, 'The label could not be deleted just now.');
    }
  }

  async addToTask(workspace: WorkspaceMembership, taskId: string, labelId: string): Promise<TaskLabels> {
    try {
      return toTaskLabels((await this.labels.AddTaskLabel({ acting: acting(workspace), taskId, labelId })).result);
    } catch (error) {
      throw refusal(error, 'The label could not be put on the task just now.');
    }
  }

  async removeFromTask(workspace: WorkspaceMembership, taskId: string, labelId: string): Promise<TaskLabels> {
    try {
      return toTaskLabels((await this.labels.RemoveTaskLabel({ acting: acting(workspace), taskId, labelId })).result);
    } catch (error) {
      throw refusal(error, 'The label could not be taken off the task just now.');
    }
  }
}

/** A refusal the person corrects in the form (a taken name, too many labels, a name not accepted); undefined for others. */
function formProblem(error: unknown, name: string): LabelFormProblem | undefined {
  if (!isGrpcError(error)) return undefined;
  switch (error.code) {
    case GrpcStatus.ALREADY_EXISTS:
      return new LabelFormProblem(409, `A label named “${name.trim()}” already exists (names are compared ignoring case). Choose another name.`);
    case GrpcStatus.FAILED_PRECONDITION:
      return new LabelFormProblem(409, `This workspace has ${labelBounds.perWorkspace} labels, the most it may have. Delete one you no longer use, then create the new one.`);
    case GrpcStatus.INVALID_ARGUMENT:
      return new LabelFormProblem(400, `Give the label a name of 1 to ${labelBounds.nameLength} characters and a colour, then save it.`);
  }
  return undefined;
}

/** A LabelsService failure as a page: what happened and what to do. */
function refusal(error: unknown, unavailable: string): UserFacingError {
  if (isGrpcError(error)) {
    switch (error.code) {
      case GrpcStatus.PERMISSION_DENIED:
        return labelsGuestRefusal();
      case GrpcStatus.NOT_FOUND:
        return new UserFacingError(404, 'Label or task not found', 'There is no such label or task in this workspace. Go back, reload the page and try again.');
      case GrpcStatus.FAILED_PRECONDITION:
        return new UserFacingError(409, 'Too many labels on the task', `A task carries at most ${labelBounds.perTask} labels. Take one off the task, then add this one.`);
      case GrpcStatus.INVALID_ARGUMENT:
        return new UserFacingError(400, 'Not accepted', 'Part of what was sent is not valid. Go back, reload the page and try again.');
    }
  }
  return new UserFacingError(503, 'Labels unavailable', `${unavailable} ${sentences.tryAgainLater}`, {}, { cause: error });
}
