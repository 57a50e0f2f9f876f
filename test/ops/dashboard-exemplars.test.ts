import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

/**
 * From a slow bucket to its trace (issue #19, docs/operations.md): the dashboard's latency panels
 * query exemplars of the histograms that carry them (`trace_id`, @tws/common exemplars.ts) and link
 * to the spans they count in the traces data source its `tracing` variable names. No stack needed.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The histograms observed with trace_id exemplars (latencyHistogram in @tws/common) and the spans they time. */
const exemplarHistograms: Record<string, RegExp> = {
  http_request_duration_seconds_bucket: /resource\.service\.name="tws-gateway" && kind=server/,
  grpc_server_handling_seconds_bucket: /kind=server && span\.rpc\.system="grpc"/,
  webhook_delivery_duration_seconds_bucket: /resource\.service\.name="tws-webhooks" && name="webhook delivery attempt"/,
};

const target = z.object({ expr: z.string().optional(), exemplar: z.boolean().optional(), datasource: z.object({ uid: z.string() }).optional() });
const panel = z.object({
  id: z.number(),
  type: z.string(),
  title: z.string(),
  targets: z.array(target).optional(),
  links: z.array(z.object({ title: z.string(), url: z.string() })).optional(),
});
const dashboard = z.object({
  templating: z.object({ list: z.array(z.object({ name: z.string(), type: z.string(), query: z.unknown() })) }),
  panels: z.array(panel),
});
const exploreState = z.object({
  datasource: z.string(),
  queries: z.array(z.object({ datasource: z.object({ type: z.string(), uid: z.string() }), queryType: z.string(), query: z.string() })).length(1),
  range: z.object({ from: z.string(), to: z.string() }),
});

const histogramOf = (expr: string | undefined): string | undefined => Object.keys(exemplarHistograms).find((name) => expr?.includes(`${name}{`));

describe.each(['deploy/grafana/task-workspace.json', 'deploy/helm/task-workspace/files/task-workspace.json'])('%s', (file) => {
  const parsed = dashboard.parse(JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')));
  const latencyPanels = parsed.panels.filter((candidate) => candidate.type === 'timeseries' && candidate.targets?.some((query) => histogramOf(query.expr)));

  it('has a `tracing` data source variable (Tempo) the trace links use', () => {
    expect(parsed.templating.list).toContainEqual(expect.objectContaining({ name: 'tracing', type: 'datasource', query: 'tempo' }));
  });

  it('shows exemplars on every latency panel, and only where the histogram carries them', () => {
    expect(latencyPanels.map((latency) => latency.title)).toEqual(
      expect.arrayContaining(['p99 duration by route', 'p50 duration by route', 'Server p99 by method', 'Delivery duration']),
    );
    for (const latency of latencyPanels) {
      expect(latency.targets!.filter((query) => query.exemplar === true).length, latency.title).toBeGreaterThan(0);
    }
    for (const query of parsed.panels.flatMap((any) => any.targets ?? []).filter((query) => query.exemplar === true)) {
      expect(histogramOf(query.expr), query.expr).toBeDefined();
    }
  });

  it("links every latency panel to its spans in the $tracing data source over the panel's time range", () => {
    for (const latency of latencyPanels) {
      const link = latency.links?.find((candidate) => candidate.url.startsWith('/explore?left='));
      expect(link, `${latency.title}: a link to Explore`).toBeDefined();
      const state = exploreState.parse(JSON.parse(decodeURIComponent(link!.url.slice('/explore?left='.length))));
      expect(state.datasource).toBe('${tracing}');
      expect(state.range).toEqual({ from: '${__from}', to: '${__to}' });
      const [query] = state.queries;
      expect(query).toMatchObject({ datasource: { type: 'tempo', uid: '${tracing}' }, queryType: 'traceql' });
      const histogram = histogramOf(latency.targets!.find((candidate) => candidate.exemplar)?.expr)!;
      expect(query!.query, latency.title).toMatch(exemplarHistograms[histogram]!);
    }
  });
});
