import * as grpc from '@grpc/grpc-js';
import DataLoader from 'dataloader';
import { currentBatchItemOrigin, isGrpcError, runAsItemOrigin, type BatchItemOrigin } from '@tws/common';
import type { BatchItemError__Output } from '@tws/proto-types/generated/tasks/v1/BatchItemError';
import type { CreateTaskRequest } from '@tws/proto-types/generated/tasks/v1/CreateTaskRequest';
import type { CreateTaskResponse__Output } from '@tws/proto-types/generated/tasks/v1/CreateTaskResponse';
import type { UpdateTaskRequest } from '@tws/proto-types/generated/tasks/v1/UpdateTaskRequest';
import type { UpdateTaskResponse__Output } from '@tws/proto-types/generated/tasks/v1/UpdateTaskResponse';
import type { TasksApi } from './backends.js';
import { afterIoRounds, batchRounds } from './io-rounds.js';

/**
 * Most items of one CreateTasks / UpdateTasks call (the tasks service's bounds, proto/tasks/v1/tasks.proto):
 * changes are sent `json_only` (answered with `task_json` alone), 24 a call; a replica older than
 * `json_only` takes 8.
 */
const maxCreatesPerCall = 64;
const maxUpdatesPerCall = 24;
const maxUpdatesPerLegacyCall = 8;

interface Item<Request> {
  request: Request;
  origin: BatchItemOrigin;
}

/** An item's failure as the error its own call would have rejected with (plugins/errors.ts maps it). */
export function itemError(error: BatchItemError__Output | null | undefined): Error & grpc.ServiceError {
  const code = (error?.code ?? grpc.status.INTERNAL) as grpc.status;
  const details = error?.details ?? 'internal error';
  return Object.assign(new Error(`${code} ${grpc.status[code] ?? ''}: ${details}`), { code, details, metadata: new grpc.Metadata() });
}

/** One answer per item, in order, from a coalesced call's results (a count that does not match fails the call). */
function answersOf<Answer>(
  results: ReadonlyArray<{ error?: BatchItemError__Output | null | undefined }>,
  answer: (result: number) => Answer | null | undefined,
  asked: number,
): Array<Answer | Error> {
  if (results.length !== asked) throw new Error(`the tasks service answered ${results.length} of ${asked} items`);
  return results.map((result, index) => answer(index) ?? itemError(result.error));
}

/** A rejection as the Error DataLoader answers an item with. */
const asError = (reason: unknown): Error => (reason instanceof Error ? reason : new Error(String(reason)));

/**
 * A tasks service without the coalesced calls (an older replica, during a rolling upgrade) answers
 * UNIMPLEMENTED: the items are then sent one call each, each under its own request id and actor.
 */
async function oneByOne<Request, Answer>(items: ReadonlyArray<Item<Request>>, single: (request: Request) => Promise<Answer>): Promise<Array<Answer | Error>> {
  const settled = await Promise.allSettled(
    items.map(({ request, origin }) => runAsItemOrigin(origin, () => single(request))),
  );
  return settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : asError(outcome.reason)));
}

const unimplemented = (error: unknown): boolean => isGrpcError(error) && error.code === grpc.status.UNIMPLEMENTED;

/**
 * A call of more changes than an older tasks replica takes, refused whole (INVALID_ARGUMENT before it
 * serves any item: nothing written).
 */
const overLegacyBound = (error: unknown, items: number): boolean =>
  items > maxUpdatesPerLegacyCall && isGrpcError(error) && error.code === grpc.status.INVALID_ARGUMENT;

/** `items` in slices of `size`, in order. */
function slices<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size));
}

/**
 * Task writes for `POST /v1/tasks` and `PATCH /v1/tasks/:id`. Like TaskReader, requests that arrive
 * while the event loop goes through two rounds of I/O share one call (DataLoader, io-rounds.ts, no
 * cache): CreateTasks / UpdateTasks, each item with its request's id and trace context, each
 * answered by its own result (or its own error, the status its own call would have had). A lone
 * request uses CreateTask / UpdateTask as before, and so does every item when the tasks service does
 * not know the coalesced calls yet (UNIMPLEMENTED: an older replica mid-upgrade). gRPC per call was
 * the largest part of a write's CPU in the gateway (HTTP/2 stream, interceptors, framing on both sides).
 */
export class TaskWriter {
  private readonly creations: DataLoader<Item<CreateTaskRequest>, CreateTaskResponse__Output>;
  private readonly updates: DataLoader<Item<UpdateTaskRequest>, UpdateTaskResponse__Output>;

  constructor(private readonly tasks: TasksApi) {
    const schedule = { cache: false, batchScheduleFn: afterIoRounds(batchRounds) } as const;
    this.creations = new DataLoader(
      async (items) => {
        if (items.length === 1) return [await tasks.CreateTask(items[0]!.request)];
        let results;
        try {
          ({ results } = await tasks.CreateTasks({ items: items.map(({ request, origin }) => ({ task: request, origin })) }));
        } catch (error) {
          if (unimplemented(error)) return oneByOne(items, (request) => tasks.CreateTask(request));
          throw error;
        }
        return answersOf(results, (index) => results[index]?.created, items.length);
      },
      { ...schedule, maxBatchSize: maxCreatesPerCall },
    );
    // The changes in one UpdateTasks call; one call each where the replica does not know it.
    const updateTogether = async (items: ReadonlyArray<Item<UpdateTaskRequest>>): Promise<Array<UpdateTaskResponse__Output | Error>> => {
      let results;
      try {
        ({ results } = await tasks.UpdateTasks({ items: items.map(({ request, origin }) => ({ change: request, origin })), jsonOnly: true }));
      } catch (error) {
        if (unimplemented(error)) return oneByOne(items, (request) => tasks.UpdateTask(request));
        throw error;
      }
      return answersOf(results, (index) => results[index]?.updated, items.length);
    };
    this.updates = new DataLoader(
      async (items) => {
        if (items.length === 1) return [await tasks.UpdateTask(items[0]!.request)];
        try {
          return await updateTogether(items);
        } catch (error) {
          if (!overLegacyBound(error, items.length)) throw error;
          // Resent 8 a call, each slice on its own: one slice's failure is not the others'.
          const resent = slices(items, maxUpdatesPerLegacyCall).map((slice) => updateTogether(slice).catch((failure: unknown) => slice.map(() => asError(failure))));
          return (await Promise.all(resent)).flat();
        }
      },
      { ...schedule, maxBatchSize: maxUpdatesPerCall },
    );
  }

  /** Creates a task (tasks.v1 CreateTask semantics). */
  create(request: CreateTaskRequest): Promise<CreateTaskResponse__Output> {
    return this.creations.load({ request, origin: currentBatchItemOrigin() });
  }

  /**
   * Changes a task (UpdateTask semantics). A change of the description is sent alone: its request
   * may be large, and the bound on items per call keeps the answers (whole tasks) bounded too.
   */
  update(request: UpdateTaskRequest): Promise<UpdateTaskResponse__Output> {
    if (request.description) return this.tasks.UpdateTask(request);
    return this.updates.load({ request, origin: currentBatchItemOrigin() });
  }
}
