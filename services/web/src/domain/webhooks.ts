import { status as GrpcStatus } from '@grpc/grpc-js';
import { z } from 'zod';
import { isGrpcError } from '@tws/common';
import { taskEventKinds, type TaskEventKind } from '@tws/contracts';
import type { Delivery__Output } from '@tws/proto-types/generated/webhooks/v1/Delivery';
import type { Endpoint__Output } from '@tws/proto-types/generated/webhooks/v1/Endpoint';
import type { WebhooksApi } from '../clients/webhooks.js';
import { sentences, UserFacingError } from './errors.js';
import type { WorkspaceMembership } from './people.js';

/** The kinds an endpoint can subscribe to (the contract's); none chosen means all three. */
export const webhookEventKinds = taskEventKinds;
export type WebhookEventKind = TaskEventKind;

/** The contract's bounds (the gateway's CreateWebhookBody): a URL of at most 2048 characters, a secret of 1 to 1024. */
export const maxUrlLength = 2048;
export const maxSecretLength = 1024;
/** Deliveries per page of the delivery log. */
export const deliveriesPageSize = 20;
/** Endpoints shown on the list (the contract sets no limit per workspace; the page does). */
export const maxListedEndpoints = 200;

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  createdAt: string;
  /** Set while the endpoint is disabled (by PATCH or automatically after failing): no new deliveries. */
  disabled?: { at: string | null; reason: 'manual' | 'failing' } | undefined;
}

export type DeliveryState = 'pending' | 'succeeded' | 'failed' | 'cancelled';
export type AttemptOutcome = 'succeeded' | 'failed' | 'blocked';

export interface AttemptRow {
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: AttemptOutcome;
  statusCode: number | undefined;
  error: string | undefined;
}

export interface DeliveryRow {
  id: string;
  eventId: string;
  event: string;
  state: DeliveryState;
  createdAt: string;
  redeliveryOf: string | undefined;
  nextAttempt: number | undefined;
  nextAttemptAt: string | undefined;
  /** Oldest first. */
  attempts: AttemptRow[];
}

export interface DeliveryPage {
  /** Newest first. */
  deliveries: DeliveryRow[];
  /** The token of the older deliveries, if there are any. */
  nextPageToken: string | undefined;
}

/** The form's fields a sentence can be about. */
export type WebhookField = 'url' | 'secret' | 'events';
export interface WebhookFormError {
  field: WebhookField;
  message: string;
}

/** What the add form is given back after a refusal: the URL and the events, never the secret. */
export interface WebhookDraft {
  url: string;
  events: WebhookEventKind[];
}

export interface Registration extends WebhookDraft {
  secret: string;
}

export const webhooksGuestRefusal = (): UserFacingError =>
  new UserFacingError(
    403,
    'Guests cannot manage webhooks',
    'Guests cannot see or manage the webhooks of a workspace. Ask an owner of this workspace to make you a member, or to set up the webhook for you.',
  );

const webhookNotFound = (): UserFacingError =>
  new UserFacingError(404, 'Webhook not found', 'There is no such webhook in this workspace; it may have been deleted. Go back to the list of webhooks.');

const isUuid = (value: string): boolean => z.uuid().safeParse(value).success;

/** The form's values checked before the webhooks service sees them (it checks again, and does the SSRF checks). */
export function checkRegistration(input: { url: string; secret: string; events: readonly string[] }): { ok: true; value: Registration } | { ok: false; draft: WebhookDraft; error: WebhookFormError } {
  const url = input.url.trim();
  const events = webhookEventKinds.filter((kind) => input.events.includes(kind));
  const draft: WebhookDraft = { url: url.slice(0, maxUrlLength), events };
  const unknown = input.events.find((kind) => !(webhookEventKinds as readonly string[]).includes(kind));
  if (unknown !== undefined) return { ok: false, draft, error: { field: 'events', message: `Choose among ${webhookEventKinds.join(', ')}, or none for all three.` } };
  if (url.length === 0) return { ok: false, draft, error: { field: 'url', message: 'Enter the HTTPS address of your receiver, e.g. https://hooks.example.com/task-workspace.' } };
  if (url.length > maxUrlLength) return { ok: false, draft, error: { field: 'url', message: `The address is ${url.length} characters long; use one of at most ${maxUrlLength}.` } };
  if (input.secret.length === 0) return { ok: false, draft, error: { field: 'secret', message: 'Enter a secret: your receiver uses it to check that each delivery comes from this workspace.' } };
  if (input.secret.length > maxSecretLength)
    return { ok: false, draft, error: { field: 'secret', message: `The secret is ${input.secret.length} characters long; use one of at most ${maxSecretLength}, then enter it again.` } };
  return { ok: true, value: { url, secret: input.secret, events } };
}

/**
 * The webhooks service's refusal of a registration (INVALID_ARGUMENT, the API's 400 messages) as a
 * sentence at the field it is about.
 */
export function registrationError(details: string): WebhookFormError {
  const url = (message: string): WebhookFormError => ({ field: 'url', message });
  if (/must use https/.test(details)) return url('Use an address that starts with https:// — webhooks are sent over HTTPS only.');
  if (/not a valid URL|has no host|url is required/.test(details)) return url('This is not a web address. Enter a full address such as https://hooks.example.com/task-workspace.');
  if (/credentials/.test(details)) return url('Remove the user name and password from the address: the secret is what proves a delivery comes from this workspace.');
  if (/does not resolve/.test(details)) return url('The host name of this address could not be found. Check its spelling, or wait until its DNS record exists, then add the webhook again.');
  if (/localhost|disallowed address/.test(details))
    return url('This address leads to this machine or a private network, which webhooks may not call. Use an address on the public internet.');
  if (/url is too long/.test(details)) return url(`Use an address of at most ${maxUrlLength} characters.`);
  if (/^secret/.test(details)) return { field: 'secret', message: `Enter a secret of 1 to ${maxSecretLength} characters.` };
  if (/^events/.test(details)) return { field: 'events', message: `Choose among ${webhookEventKinds.join(', ')}, or none for all three.` };
  return url('This address was not accepted. Check it, then add the webhook again.');
}

const states: Partial<Record<string, DeliveryState>> = {
  DELIVERY_STATE_PENDING: 'pending',
  DELIVERY_STATE_SUCCEEDED: 'succeeded',
  DELIVERY_STATE_FAILED: 'failed',
  DELIVERY_STATE_CANCELLED: 'cancelled',
};
const outcomes: Partial<Record<string, AttemptOutcome>> = {
  ATTEMPT_OUTCOME_SUCCEEDED: 'succeeded',
  ATTEMPT_OUTCOME_FAILED: 'failed',
  ATTEMPT_OUTCOME_BLOCKED: 'blocked',
};

const disabledReasons: Partial<Record<string, 'manual' | 'failing'>> = { DISABLED_REASON_MANUAL: 'manual', DISABLED_REASON_FAILING: 'failing' };

export const toEndpointRow = (endpoint: Endpoint__Output): EndpointRow => {
  // A reason is set only while disabled (an older webhooks service sends none: enabled).
  const reason = disabledReasons[String(endpoint.disabledReason)];
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    createdAt: endpoint.createdAt,
    ...(reason ? { disabled: { at: endpoint.disabledAt ?? null, reason } } : {}),
  };
};

export function toDeliveryRow(delivery: Delivery__Output): DeliveryRow {
  const state = states[String(delivery.state)];
  if (!state) throw new Error(`unknown delivery state from the webhooks service: ${String(delivery.state)}`);
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    event: delivery.event,
    state,
    createdAt: delivery.createdAt,
    redeliveryOf: delivery.redeliveryOf ?? undefined,
    nextAttempt: delivery.nextAttempt ?? undefined,
    nextAttemptAt: delivery.nextAttemptAt ?? undefined,
    attempts: delivery.attempts.map((attempt) => {
      const outcome = outcomes[String(attempt.outcome)];
      if (!outcome) throw new Error(`unknown attempt outcome from the webhooks service: ${String(attempt.outcome)}`);
      return {
        attempt: attempt.attempt,
        startedAt: attempt.startedAt,
        durationMs: attempt.durationMs,
        outcome,
        statusCode: attempt.statusCode ?? undefined,
        error: attempt.error ?? undefined,
      };
    }),
  };
}

/**
 * The webhooks of the workspace settings. webhooks.v1 takes only a workspace id, so the app decides
 * who may: owners and members manage every webhook of the workspace (as any API key of theirs
 * may, contract §4 "Webhooks are managed with an API key"); guests, who cannot hold a key, none.
 * The role is the one ListMembershipsByEmail gave for this request.
 */
export class Webhooks {
  constructor(private readonly api: WebhooksApi) {}

  async list(workspace: WorkspaceMembership): Promise<{ endpoints: EndpointRow[]; truncated: boolean }> {
    const workspaceId = managedBy(workspace);
    try {
      const { endpoints } = await this.api.ListEndpoints({ workspaceId });
      return { endpoints: endpoints.slice(0, maxListedEndpoints).map(toEndpointRow), truncated: endpoints.length > maxListedEndpoints };
    } catch (error) {
      throw refusal(error, 'The webhooks could not be loaded just now.');
    }
  }

  /** The endpoint of this workspace with that id (404 otherwise). */
  async get(workspace: WorkspaceMembership, endpointId: string): Promise<EndpointRow> {
    if (!isUuid(endpointId)) throw webhookNotFound();
    const { endpoints } = await this.list(workspace);
    const endpoint = endpoints.find((candidate) => candidate.id === endpointId);
    if (!endpoint) throw webhookNotFound();
    return endpoint;
  }

  /** Registers an endpoint; a refusal of the URL or secret comes back as a sentence at its field. */
  async create(workspace: WorkspaceMembership, registration: Registration): Promise<{ ok: true; endpoint: EndpointRow } | { ok: false; error: WebhookFormError }> {
    const workspaceId = managedBy(workspace);
    try {
      const { endpoint } = await this.api.CreateEndpoint({ workspaceId, url: registration.url, secret: registration.secret, events: registration.events });
      if (!endpoint) throw new Error('CreateEndpoint answered without an endpoint');
      return { ok: true, endpoint: toEndpointRow(endpoint) };
    } catch (error) {
      if (isGrpcError(error) && error.code === GrpcStatus.INVALID_ARGUMENT) return { ok: false, error: registrationError(error.details) };
      throw refusal(error, 'The webhook could not be added just now.');
    }
  }

  async delete(workspace: WorkspaceMembership, endpointId: string): Promise<void> {
    const workspaceId = managedBy(workspace);
    if (!isUuid(endpointId)) throw webhookNotFound();
    try {
      await this.api.DeleteEndpoint({ workspaceId, endpointId });
    } catch (error) {
      throw refusal(error, 'The webhook could not be deleted just now; it may still receive events.');
    }
  }

  /** One page of the delivery log, newest first; `pageToken` from the previous page ('' = the newest). */
  async deliveries(workspace: WorkspaceMembership, endpointId: string, pageToken: string): Promise<DeliveryPage> {
    const workspaceId = managedBy(workspace);
    if (!isUuid(endpointId)) throw webhookNotFound();
    try {
      const page = await this.api.ListDeliveries({ workspaceId, endpointId, pageSize: deliveriesPageSize, pageToken });
      return { deliveries: page.deliveries.map(toDeliveryRow), nextPageToken: page.nextPageToken === '' ? undefined : page.nextPageToken };
    } catch (error) {
      if (isGrpcError(error) && error.code === GrpcStatus.INVALID_ARGUMENT)
        throw new UserFacingError(400, 'Page not found', 'This page of the delivery log does not exist. Go back to the newest deliveries.');
      throw refusal(error, 'The delivery log could not be loaded just now.');
    }
  }

  /** Sends a delivery again: a new delivery with the same event id, attempt 1 at once. */
  async redeliver(workspace: WorkspaceMembership, endpointId: string, deliveryId: string): Promise<DeliveryRow> {
    const workspaceId = managedBy(workspace);
    if (!isUuid(endpointId)) throw webhookNotFound();
    if (!isUuid(deliveryId)) throw deliveryNotFound();
    try {
      const { delivery } = await this.api.RedeliverDelivery({ workspaceId, endpointId, deliveryId });
      if (!delivery) throw new Error('RedeliverDelivery answered without a delivery');
      return toDeliveryRow(delivery);
    } catch (error) {
      if (isGrpcError(error) && error.code === GrpcStatus.NOT_FOUND && /delivery/.test(error.details)) throw deliveryNotFound();
      throw refusal(error, 'The delivery could not be sent again just now.');
    }
  }
}

const deliveryNotFound = (): UserFacingError =>
  new UserFacingError(404, 'Delivery not found', 'There is no such delivery of this webhook. Reload the delivery log and try again.');

/** The workspace id to act in, once the role allows it (a guest: the refusal, before any call). */
function managedBy(workspace: WorkspaceMembership): string {
  if (workspace.role === 'guest') throw webhooksGuestRefusal();
  return workspace.workspaceId;
}

/** A WebhooksService failure as a page: what happened and what to do. */
function refusal(error: unknown, unavailable: string): UserFacingError {
  if (error instanceof UserFacingError) return error;
  if (isGrpcError(error) && error.code === GrpcStatus.NOT_FOUND) return webhookNotFound();
  return new UserFacingError(503, 'Webhooks unavailable', `${unavailable} ${sentences.tryAgainLater}`, {}, { cause: error });
}
