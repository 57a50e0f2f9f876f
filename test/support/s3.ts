import { Client as MinioClient } from 'minio';
import { inject } from 'vitest';

/** An S3 client of the test stack's MinIO (path-style, us-east-1: what the services speak). */
export function stackS3Client(): MinioClient {
  const { s3 } = inject('stack');
  const url = new URL(s3.endpoint);
  return new MinioClient({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    accessKey: s3.accessKey,
    secretKey: s3.secretKey,
    pathStyle: true,
    region: 'us-east-1',
  });
}
