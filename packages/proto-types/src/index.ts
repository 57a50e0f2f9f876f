import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as TasksProto } from './generated/tasks.js';
import type { ProtoGrpcType as AttachmentsProto } from './generated/attachments.js';
import type { ProtoGrpcType as WebhooksProto } from './generated/webhooks.js';
import type { ProtoGrpcType as AuditProto } from './generated/audit.js';

export type { TasksProto, AttachmentsProto, WebhooksProto, AuditProto };

/** The proto sources; kept beside the package in the repository and in container images. */
export const protoRoot = fileURLToPath(new URL('../../../proto', import.meta.url));

interface OptionsFile {
  keepCase: boolean;
  longs: 'String' | 'Number';
  enums: 'String';
  defaults: boolean;
  oneofs: boolean;
}

/**
 * The exact options the types were generated with (scripts/gen-proto.mjs reads the same file).
 * JSON holds type names; proto-loader wants the constructors themselves.
 */
const fileOptions = JSON.parse(readFileSync(new URL('../options.json', import.meta.url), 'utf8')) as OptionsFile;
const loaderOptions: protoLoader.Options = {
  keepCase: fileOptions.keepCase,
  longs: fileOptions.longs === 'String' ? String : Number,
  enums: String,
  defaults: fileOptions.defaults,
  oneofs: fileOptions.oneofs,
};

function loadPackage<T>(file: string): T {
  const definition = protoLoader.loadSync(file, { ...loaderOptions, includeDirs: [protoRoot] });
  return grpc.loadPackageDefinition(definition) as unknown as T;
}

export const loadTasksProto = (): TasksProto => loadPackage<TasksProto>('tasks/v1/tasks.proto');
export const loadAttachmentsProto = (): AttachmentsProto => loadPackage<AttachmentsProto>('attachments/v1/attachments.proto');
export const loadWebhooksProto = (): WebhooksProto => loadPackage<WebhooksProto>('webhooks/v1/webhooks.proto');
export const loadAuditProto = (): AuditProto => loadPackage<AuditProto>('audit/v1/audit.proto');
