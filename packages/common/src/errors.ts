import { status as GrpcStatus } from '@grpc/grpc-js';

/** The failure kinds a domain operation can report; each maps to one gRPC status and one HTTP status. */
export type FailureKind =
  | 'invalid_argument'
  | 'not_found'
  | 'permission_denied'
  | 'unauthenticated'
  | 'already_exists'
  | 'failed_precondition'
  | 'resource_exhausted'
  | 'unavailable'
  /** A condition of the request on the current state (an If-Match tag) no longer holds. */
  | 'aborted';

/** An expected failure whose message is safe to show to API clients. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

export const grpcStatusOfFailure: Record<FailureKind, GrpcStatus> = {
  invalid_argument: GrpcStatus.INVALID_ARGUMENT,
  not_found: GrpcStatus.NOT_FOUND,
  permission_denied: GrpcStatus.PERMISSION_DENIED,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  already_exists: GrpcStatus.ALREADY_EXISTS,
  failed_precondition: GrpcStatus.FAILED_PRECONDITION,
  resource_exhausted: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  aborted: GrpcStatus.ABORTED,
};

export const invalid = (message: string): DomainError => new DomainError('invalid_argument', message);
export const notFound = (message: string): DomainError => new DomainError('not_found', message);
export const forbidden = (message: string): DomainError => new DomainError('permission_denied', message);
