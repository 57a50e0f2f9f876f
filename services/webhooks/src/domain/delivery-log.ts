import { z } from 'zod';
import { invalid } from '@tws/common';
import type { DeliveryLogEntry, DeliveryStore } from '../store/deliveries.js';
import type { EndpointStore } from '../store/endpoints.js';
import { requireEndpoint } from './endpoints.js';

export interface DeliveryLogDeps {
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
}

/** Deliveries per page when the caller does not say. */
export const defaultPageSize = 20;

export interface DeliveryLogPage {
  /** Newest first. */
  deliveries: DeliveryLogEntry[];
  /** Opaque cursor of the next page; '' on the last one. */
  nextCursor: string;
}

/** The cursor is opaque to callers: the id of the last delivery of the page, base64url. */
const encodeCursor = (deliveryId: string): string => Buffer.from(deliveryId, 'utf8').toString('base64url');
function decodeCursor(cursor: string): string | undefined {
  if (cursor === '') return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!z.uuid().safeParse(id).success) throw invalid('cursor is invalid');
  return id;
}

/**
 * One page of an endpoint's delivery log, newest first. The endpoint must be the workspace's: an
 * unknown endpoint is NOT_FOUND whatever the cursor.
 */
export async function listDeliveries(
  deps: DeliveryLogDeps,
  input: { workspaceId: string; endpointId: string; pageSize: number; cursor: string },
): Promise<DeliveryLogPage> {
  await requireEndpoint(deps.endpoints, input.workspaceId, input.endpointId);
  const after = decodeCursor(input.cursor);
  const entries = await deps.deliveries.listForEndpoint(input.endpointId, input.pageSize + 1, after);
  const page = entries.slice(0, input.pageSize);
  const last = page[page.length - 1];
  return { deliveries: page, nextCursor: entries.length > input.pageSize && last ? encodeCursor(last.id) : '' };
}
