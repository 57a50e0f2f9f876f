import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/** One span as an OTLP/JSON export carries it, with its resource's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

const anyValue = z.object({
  stringValue: z.string().optional(),
  intValue: z.union([z.string(), z.number()]).optional(),
  doubleValue: z.number().optional(),
  boolValue: z.boolean().optional(),
});
const keyValues = z.array(z.object({ key: z.string(), value: anyValue })).default([]);
const exportRequest = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: keyValues }).default({ attributes: [] }),
        scopeSpans: z
          .array(
            z.object({
              spans: z
                .array(
                  z.object({
                    traceId: z.string(),
                    spanId: z.string(),
                    parentSpanId: z.string().optional(),
                    name: z.string(),
                    kind: z.number().int().default(0),
                    attributes: keyValues,
                  }),
                )
                .default([]),
            }),
          )
          .default([]),
      }),
    )
    .default([]),
});

function flatten(attributes: z.infer<typeof keyValues>): Record<string, string | number | boolean> {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    const scalar = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.doubleValue ?? value.boolValue;
    if (scalar !== undefined) flat[key] = scalar;
  }
  return flat;
}

export interface OtlpReceiver {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the services (they post to `<endpoint>/v1/traces`). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** How many export requests were not valid OTLP/JSON (should stay 0). */
  rejected: number;
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP receiver (JSON encoding: OTEL_EXPORTER_OTLP_PROTOCOL=http/json) on loopback: the
 * services export over the wire to it, as they would to an OpenTelemetry Collector. Bodies over
 * 8 MiB are refused (413); every span of a valid request is kept in `spans`.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const state = { rejected: 0 };
  const server: Server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 8 * 1024 * 1024) {
        response.writeHead(413).end();
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      let parsed: z.infer<typeof exportRequest>;
      try {
        parsed = exportRequest.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        state.rejected += 1;
        response.writeHead(400, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      for (const resourceSpans of parsed.resourceSpans) {
        const service = String(flatten(resourceSpans.resource.attributes)['service.name'] ?? '');
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              service,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: flatten(span.attributes),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    get rejected() {
      return state.rejected;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
