import { randomUUID } from 'node:crypto';
import { invalid, notFound, type Logger } from '@tws/common';
import { taskEventKinds, type TaskEventKind } from '@tws/contracts';
import type { HostVetter } from '../clients/host-vetting.js';
import type { WebhookMetrics } from '../metrics.js';
import type { EndpointRecord, EndpointStore } from '../store/endpoints.js';
import type { SecretBox } from '../store/secret-box.js';

export interface EndpointDeps {
  endpoints: EndpointStore;
  vetter: HostVetter;
  secrets: SecretBox;
  metrics: WebhookMetrics;
  logger: Logger;
  /** Told about every endpoint this replica deletes. */
  onDeleted?: ((endpointId: string) => void) | undefined;
}

export interface Registration {
  workspaceId: string;
  url: string;
  secret: string;
  /** Kinds subscribed to; none means all of them. */
  events: readonly TaskEventKind[];
}

/**
 * Registers an endpoint: its host must resolve to global addresses only (the SSRF guard), its
 * secret is stored encrypted and bound to the new endpoint's id.
 */
export async function registerEndpoint(deps: EndpointDeps, input: Registration): Promise<EndpointRecord> {
  const vetting = await vetUrl(deps, input.workspaceId, input.url);
  const events = subscribedKinds(input.events);
  const id = randomUUID();
  const endpoint = await deps.endpoints.create({
    id,
    workspaceId: input.workspaceId,
    // The URL as the WHATWG parser serialises it: what every attempt will call.
    url: vetting.target.url.href,
    events,
    secretCiphertext: deps.secrets.seal(input.secret, id),
  });
  deps.logger.info({ endpointId: id, workspaceId: input.workspaceId, host: vetting.target.host, events }, 'webhook endpoint registered');
  return endpoint;
}

/**
 * The SSRF guard of registration and of a URL change (PATCH): https, the host resolves, and only to
 * global addresses; INVALID_ARGUMENT otherwise.
 */
export async function vetUrl(deps: EndpointDeps, workspaceId: string, url: string) {
  const vetting = await deps.vetter.vet(url);
  if (!vetting.ok) {
    if (vetting.kind === 'blocked') {
      deps.metrics.ssrfBlocked.inc({ stage: 'registration' });
      // The resolved address goes to the service log only, never to the caller.
      deps.logger.warn({ workspaceId, detail: vetting.detail }, 'webhook registration refused by the SSRF guard');
    }
    throw invalid(vetting.kind === 'dns-error' || vetting.kind === 'unresolvable' ? 'host does not resolve' : vetting.reason);
  }
  return vetting;
}

/** The kinds subscribed to, in the contract's order; none given means all of them. */
export function subscribedKinds(requested: readonly TaskEventKind[]): TaskEventKind[] {
  const wanted = new Set(requested);
  return wanted.size === 0 ? [...taskEventKinds] : taskEventKinds.filter((type) => wanted.has(type));
}

export function listEndpoints(deps: Pick<EndpointDeps, 'endpoints'>, workspaceId: string): Promise<EndpointRecord[]> {
  return deps.endpoints.list(workspaceId);
}

/** Deletes an endpoint (its pending deliveries are cancelled) and stops this replica's attempts to it at once. */
export async function deleteEndpoint(deps: EndpointDeps, workspaceId: string, endpointId: string): Promise<void> {
  if (!(await deps.endpoints.delete(workspaceId, endpointId))) throw notFound('webhook not found');
  // This replica stops at once; the others within their next poll (workers/deleted-endpoints.ts).
  deps.onDeleted?.(endpointId);
  deps.logger.info({ endpointId, workspaceId }, 'webhook endpoint deleted');
}

/** The workspace's endpoint, or NOT_FOUND (another workspace's endpoint is not found either). */
export async function requireEndpoint(endpoints: EndpointStore, workspaceId: string, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await endpoints.get(workspaceId, endpointId);
  if (!endpoint) throw notFound('webhook not found');
  return endpoint;
}
