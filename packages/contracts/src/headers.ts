/** Kafka header names of every message this project produces (values are UTF-8 strings). */
export const headerNames = {
  eventId: 'event-id',
  eventType: 'event-type',
  workspaceId: 'workspace-id',
  attempt: 'attempt',
  notBefore: 'not-before',
  deliveryId: 'delivery-id',
  redeliveryOf: 'redelivery-of',
  originalTopic: 'original-topic',
  originalPartition: 'original-partition',
  originalOffset: 'original-offset',
  /**
   * The id of the API request that caused the message (its `X-Request-Id`), when there was one: on
   * task events and on the scheduled attempts of their deliveries, for the logs. Never trusted as
   * more than a log field.
   */
  requestId: 'request-id',
  /**
   * W3C trace context (`00-<trace id>-<span id>-<flags>`) of the span that produced the message, when
   * tracing is on: task events (the outbox relay's span) and scheduled attempts (the attempt that
   * scheduled them). The consumer's span is its child; a value that is not a sane traceparent is ignored.
   */
  traceparent: 'traceparent',
} as const;

/** Headers as a Kafka client hands them over (kafkajs' IHeaders has this shape). */
export type MessageHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>;

/** A message to produce: key, value and string headers. */
export interface OutboundMessage {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** The first value of a header as text, or undefined when absent. */
export function headerText(headers: MessageHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

/** Parses JSON bytes; the problem as text when they are empty or not JSON. */
export function parseJson(value: Buffer | null): { json: unknown } | string {
  if (!value) return 'empty message value';
  try {
    return { json: JSON.parse(value.toString('utf8')) as unknown };
  } catch {
    return 'value is not JSON';
  }
}
