import { Counter, Gauge, type Registry } from 'prom-client';

export type SweepReason = 'abandoned_upload' | 'revoked_upload' | 'registered_upload' | 'task_deleted';

export interface AttachmentMetrics {
  uploadsRequested: Counter;
  registered: Counter;
  bytesRegistered: Counter;
  sweeperRemoved: Counter<'reason'>;
  sweeperLastSuccess: Gauge;
}

export function attachmentMetrics(registry: Registry): AttachmentMetrics {
  const registers = [registry];
  return {
    uploadsRequested: new Counter({
      name: 'attachment_uploads_requested_total',
      help: 'Upload URLs handed out (POST /v1/attachments/upload).',
      registers,
    }),
    registered: new Counter({
      name: 'attachment_registered_total',
      help: 'Attachments registered on a task (repeated registrations of one upload count once).',
      registers,
    }),
    bytesRegistered: new Counter({
      name: 'attachment_bytes_registered_total',
      help: 'Bytes of the attachments registered.',
      registers,
    }),
    sweeperRemoved: new Counter({
      name: 'attachment_sweeper_removed_total',
      help: 'Objects removed by the sweeper: abandoned_upload (never registered, URL expired), revoked_upload (attachment removed earlier, URL now expired), registered_upload (upload object of a registered attachment, which has its own copy, URL now expired), task_deleted (attachment of a task that no longer exists).',
      labelNames: ['reason'],
      registers,
    }),
    sweeperLastSuccess: new Gauge({
      name: 'attachment_sweeper_last_success_timestamp_seconds',
      help: 'Unix time the last complete sweep finished on this replica (0 = none yet).',
      registers,
    }),
  };
}
