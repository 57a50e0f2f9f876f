// The webhook half: event → signed delivery through the whole pipeline (tasks outbox → Kafka →
// webhooks replicas → the receiver): the sustained run, then the burst.
import { kafkaOf, waitForPipelineIdle, waitForStableGroups } from '../lib/kafka.mjs';
import { settings } from '../lib/settings.mjs';
import { startWebhookReplicas } from '../lib/stack.mjs';
import { benchBurst } from './burst.mjs';
import { createWebhookFixture } from './fixture.mjs';
import { benchSustained } from './sustained.mjs';

export async function benchWebhooks(stack, receiver) {
  await waitForPipelineIdle(stack, 'before the webhook runs');
  await startWebhookReplicas(stack, settings.webhookReplicas);
  await waitForStableGroups(stack, settings.webhookReplicas);
  const fixture = await createWebhookFixture(stack, receiver);
  await waitForPipelineIdle(stack, 'webhooks: before the runs');
  const context = { stack, receiver, kafka: kafkaOf(stack, 'bench-tap'), ...fixture };
  const sustained = await benchSustained(context);
  await waitForPipelineIdle(stack, 'webhooks: before the burst');
  const burst = await benchBurst(context);
  return {
    sustained,
    burst,
    receiver: { requests: receiver.state.total, badSignatures: receiver.state.badSignatures, unparsable: receiver.state.unparsable },
  };
}
