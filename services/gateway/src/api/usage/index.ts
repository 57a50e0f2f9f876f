import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { GetWorkspaceUsageResponse__Output } from '@tws/proto-types/generated/attachments/v1/GetWorkspaceUsageResponse';
import type { GetUsageResponse__Output } from '@tws/proto-types/generated/tasks/v1/GetUsageResponse';
import { z } from 'zod';
import { errorResponses } from '../schemas/common.js';

const Counted = (what: string) =>
  z.object({
    count: z.int().meta({ description: `${what} the workspace has now.` }),
    limit: z.int().nullable().meta({ description: `The plan's limit (creating one more at the limit answers 403); null: no limit.` }),
  });

export const Usage = z
  .object({
    plan: z.enum(['free', 'pro']),
    projects: Counted('Projects'),
    tasks: Counted('Tasks'),
    attachments: z
      .object({
        count: z.int().meta({ description: 'Registered attachments.' }),
        bytes: z.int().meta({ description: 'Their total size in bytes (uploads never registered are not counted).' }),
        maxFileBytes: z.int().meta({ description: "The plan's largest upload (a larger `size` answers 400); 1 MB = 2^20 bytes." }),
      })
      .nullable()
      .meta({ description: 'null when the attachments service did not answer in time: the rest is still exact; ask again later.' }),
  })
  .meta({ id: 'Usage', description: 'The plan, its limits and the counts they apply to, to warn before a 403.' });
type Usage = z.output<typeof Usage>;

const planOf = (plan: GetUsageResponse__Output['plan']): Usage['plan'] => (plan === 'PLAN_PRO' ? 'pro' : 'free');

function attachmentsOf(usage: GetWorkspaceUsageResponse__Output, plan: Usage['plan']): Usage['attachments'] {
  const limit = usage.uploadLimits.find((entry) => entry.plan === plan);
  if (!limit) throw new Error(`the attachments service names no upload limit for the ${plan} plan`);
  return { count: usage.attachmentCount, bytes: Number(usage.storedBytes), maxFileBytes: Number(limit.maxFileBytes) };
}

/** GET /v1/usage: the tasks service's plan and counters and the attachments service's bytes, asked in parallel. */
const usageRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/usage',
    {
      config: { auth: true },
      schema: {
        tags: ['Workspace'],
        operationId: 'getUsage',
        summary: "The workspace's plan, limits and current counts",
        response: { 200: Usage, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      const workspaceId = request.principal.workspaceId;
      // Attachments are informational (no plan limits their total): when that service fails, the
      // answer still carries the counts that decide a 403, with `attachments: null`.
      const [tasks, attachments] = await Promise.all([
        app.tasksApi.GetUsage({ workspaceId }),
        app.attachmentsApi.GetWorkspaceUsage({ workspaceId }).catch((error: unknown) => {
          request.log.warn({ err: error }, 'usage without attachments: the attachments service failed');
          return null;
        }),
      ]);
      const plan = planOf(tasks.plan);
      return {
        plan,
        projects: { count: tasks.projectCount, limit: tasks.maxProjects ?? null },
        tasks: { count: tasks.taskCount, limit: tasks.maxTasks ?? null },
        attachments: attachments === null ? null : attachmentsOf(attachments, plan),
      };
    },
  );
};

export default usageRoutes;
