import type { KafkaProduceMetrics } from '@tws/common';
import type { OutboundMessage } from '@tws/contracts';
import type { Producer } from 'kafkajs';

/**
 * Produces retry, dead-letter and redelivery messages with acks from all in-sync replicas,
 * coalescing messages sent within a few milliseconds into one request. `send` resolves only once
 * the brokers acknowledged the message.
 */
export class HandoffProducer {
  private queue: Array<{ topic: string; message: OutboundMessage; resolve: () => void; reject: (error: unknown) => void }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly producer: Producer,
    private readonly lingerMs = 2,
    /** One produce request per flush: `topic` is its topic, or `mixed` when it spans several. */
    private readonly metrics?: KafkaProduceMetrics,
  ) {}

  send(topic: string, message: OutboundMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, message, resolve, reject });
      this.timer ??= setTimeout(() => this.flush(), this.lingerMs);
    });
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const byTopic = new Map<string, OutboundMessage[]>();
    for (const { topic, message } of batch) byTopic.set(topic, [...(byTopic.get(topic) ?? []), message]);
    const send = () => this.producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    const label = byTopic.size === 1 ? [...byTopic.keys()][0]! : 'mixed';
    (this.metrics ? this.metrics.time(label, send) : send())
      .then(
        () => batch.forEach((entry) => entry.resolve()),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      );
  }
}
