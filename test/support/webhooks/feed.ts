import * as grpc from '@grpc/grpc-js';
import { callUnary } from '@tws/common';
import { setDnsRecord } from '@tws/devstack';
import { loadWebhooksProto } from '@tws/proto-types';
import type { WebhooksServiceClient } from '@tws/proto-types/generated/webhooks/v1/WebhooksService';
import type { Producer } from 'kafkajs';
import { inject } from 'vitest';
import { kafkaClient } from './fixtures.js';
import type { TestReceiver } from './receiver.js';

/**
 * What the fault tests feed the stack's webhooks service through: its gRPC API (endpoints are
 * registered there, not through the gateway) and a Kafka producer of task events, as the tasks
 * service's relay publishes them. `close` also closes the receivers registered and drops their names.
 */
export class WebhooksFeed {
  readonly client: WebhooksServiceClient;
  readonly producer: Producer;
  private readonly receivers: TestReceiver[] = [];

  private constructor() {
    const proto = loadWebhooksProto();
    this.client = new proto.webhooks.v1.WebhooksService(inject('stack').webhooks.grpcTarget, grpc.credentials.createInsecure());
    this.producer = kafkaClient().producer();
  }

  static async open(): Promise<WebhooksFeed> {
    const feed = new WebhooksFeed();
    await feed.producer.connect();
    return feed;
  }

  /**
   * Registers `receiver` as an endpoint of the workspace (subscribed to every event), its name answered
   * by the test DNS server and cached 30 s as real DNS would be; returns the endpoint's id.
   */
  async register(workspaceId: string, receiver: TestReceiver, secret: string): Promise<string> {
    this.receivers.push(receiver);
    const { webhooks } = inject('stack');
    await setDnsRecord(webhooks.dnsControlUrl, receiver.host, { a: [webhooks.receiverAddress], ttl: 30 });
    const { endpoint } = await callUnary(this.client, this.client.CreateEndpoint, { workspaceId, url: `${receiver.origin}/`, secret, events: [] });
    if (!endpoint?.id) throw new Error(`CreateEndpoint answered no endpoint for ${receiver.origin}`);
    return endpoint.id;
  }

  async close(): Promise<void> {
    await this.producer.disconnect();
    this.client.close();
    await Promise.all(this.receivers.map((receiver) => receiver.close()));
    for (const receiver of this.receivers) await setDnsRecord(inject('stack').webhooks.dnsControlUrl, receiver.host, undefined);
  }
}
