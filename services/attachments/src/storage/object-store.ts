import { Client } from 'minio';
import type { AttachmentsConfig } from '../config.js';

/** Plain S3 (path-style, fixed region), so AWS S3, MinIO, Ceph RGW or Garage all work. */
export function createObjectStore(config: AttachmentsConfig, endpoint: string = config.S3_ENDPOINT): Client {
  const url = new URL(endpoint);
  return new Client({
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
    useSSL: url.protocol === 'https:',
    accessKey: config.S3_ACCESS_KEY,
    secretKey: config.S3_SECRET_KEY,
    region: config.S3_REGION,
    pathStyle: true,
  });
}

/** Creates the bucket if it does not exist (idempotent; used by the migration job). */
export async function ensureBucket(client: Client, bucket: string, region: string): Promise<void> {
  if (!(await client.bucketExists(bucket))) await client.makeBucket(bucket, region);
}
