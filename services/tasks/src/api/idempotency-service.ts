import { unary } from '@tws/common';
import type { IdempotencyServiceHandlers } from '@tws/proto-types/generated/tasks/v1/IdempotencyService';
import type { IdempotencyOutcome } from '@tws/proto-types/generated/tasks/v1/IdempotencyOutcome';
import type { StoredResponse__Output } from '@tws/proto-types/generated/tasks/v1/StoredResponse';
import { beginIdempotentRequest, completeIdempotentRequest, releaseIdempotentRequest, type BeginOutcome, type IdempotencySettings } from '../domain/idempotency.js';
import type { HandlerDeps } from './tasks-service.js';

const outcomes: Record<BeginOutcome['outcome'], IdempotencyOutcome> = {
  proceed: 'IDEMPOTENCY_OUTCOME_PROCEED',
  replay: 'IDEMPOTENCY_OUTCOME_REPLAY',
  mismatch: 'IDEMPOTENCY_OUTCOME_MISMATCH',
  in_progress: 'IDEMPOTENCY_OUTCOME_IN_PROGRESS',
};

const answerOf = (response: StoredResponse__Output | null) => ({
  statusCode: response?.statusCode ?? 0,
  contentType: response?.contentType ?? '',
  body: response?.body ?? Buffer.alloc(0),
});

/** tasks.v1.IdempotencyService: stored answers of POSTs sent with an Idempotency-Key (domain/idempotency.ts). */
export function idempotencyServiceHandlers({ pool, logger, metrics, settings }: HandlerDeps & { settings: IdempotencySettings }): IdempotencyServiceHandlers {
  const options = { service: 'tasks.v1.IdempotencyService', logger, metrics };
  return {
    BeginIdempotentRequest: unary(
      'BeginIdempotentRequest',
      async (request) => {
        const begun = await beginIdempotentRequest(pool, settings, { workspaceId: request.workspaceId, key: request.key, fingerprint: request.fingerprint });
        return {
          outcome: outcomes[begun.outcome],
          claimToken: begun.outcome === 'proceed' ? begun.claimToken : '',
          ...(begun.outcome === 'replay' ? { response: begun.answer } : {}),
        };
      },
      options,
    ),
    CompleteIdempotentRequest: unary(
      'CompleteIdempotentRequest',
      async (request) => ({
        stored: await completeIdempotentRequest(pool, settings, {
          workspaceId: request.workspaceId,
          key: request.key,
          claimToken: request.claimToken,
          answer: answerOf(request.response),
        }),
      }),
      options,
    ),
    ReleaseIdempotentRequest: unary(
      'ReleaseIdempotentRequest',
      async (request) => {
        await releaseIdempotentRequest(pool, { workspaceId: request.workspaceId, key: request.key, claimToken: request.claimToken });
        return {};
      },
      options,
    ),
  };
}
