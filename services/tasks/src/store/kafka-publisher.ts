import { createKafka, type KafkaProduceMetrics, type Logger } from '@tws/common';
import type { OutboundMessage } from '@tws/contracts';
import { Partitioners, type KafkaConfig, type Producer } from 'kafkajs';

/**
 * The relay's only door to Kafka (kafkajs is in maintenance mode: a compatible client can replace
 * it here). `publish` resolves once every message is acknowledged by all in-sync replicas.
 */
export interface EventPublisher {
  publish(topic: string, messages: OutboundMessage[]): Promise<void>;
  close(): Promise<void>;
}

export function kafkaPublisher(options: {
  brokers: string[];
  clientId: string;
  logger: Logger;
  security?: Pick<KafkaConfig, 'ssl' | 'sasl'>;
  /** kafka_produce_duration_seconds / kafka_produce_errors_total (a failed connect counts as a failed produce). */
  metrics?: KafkaProduceMetrics;
}): EventPublisher {
  // Short client-side retries: the relay retries with its own backoff, and a send must end soon
  // enough for shutdown to finish the batch in flight.
  const kafka = createKafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logger: options.logger,
    ...options.security,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { retries: 2, initialRetryTime: 300, maxRetryTime: 2_000 },
  });
  let producer: Producer | undefined;
  let connected = false;

  // A producer whose connect failed is reused for the next attempt (kafkajs warns once per producer
  // about limited retries); one whose send failed is replaced, so no state of a broken session stays.
  const ready = async (): Promise<Producer> => {
    producer ??= kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // murmur2, as the Java client: the same key lands on the same partition whoever publishes it.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    if (!connected) {
      try {
        await producer.connect();
      } catch (error) {
        await producer.disconnect().catch(() => undefined);
        throw error;
      }
      connected = true;
    }
    return producer;
  };

  const reset = async (): Promise<void> => {
    const current = producer;
    producer = undefined;
    connected = false;
    await current?.disconnect().catch(() => undefined);
  };

  return {
    async publish(topic, messages) {
      if (messages.length === 0) return;
      const produce = async (): Promise<void> => {
        const active = await ready();
        try {
          await active.send({ topic, acks: -1, timeout: 10_000, messages });
        } catch (error) {
          // Start from a fresh connection next time (the broker may have restarted).
          await reset();
          throw error;
        }
      };
      await (options.metrics ? options.metrics.time(topic, produce) : produce());
    },
    close: reset,
  };
}
