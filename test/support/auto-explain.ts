/**
 * What Postgres really runs for a piece of store code, nested statements included: the plpgsql
 * function's statements and the foreign-key checks and actions, which EXPLAIN of the outer
 * statement does not show. `underAutoExplain` runs the work in a session of its own (Postgres keeps
 * a session's plans of foreign-key actions, so another session's plans, made with sequential scans
 * allowed, would be reused) and inside a transaction it rolls back, with `auto_explain` sending the
 * plan of every statement to this client as a LOG message and sequential scans priced out: where
 * no index can answer, a plan still holds a Seq Scan.
 */
import pg from 'pg';

/** One statement's plan as auto_explain wrote it: the statement's text and the plan's JSON text. */
export interface ExplainedPlan {
  query: string;
  plan: string;
}

export interface ExplainedRun<T> {
  result: T;
  plans: ExplainedPlan[];
  /** The relations the plans read with a Seq Scan (none when every statement walks an index). */
  seqScans: string[];
}

const settings = [
  'auto_explain.log_min_duration = 0',
  'auto_explain.log_nested_statements = on',
  "auto_explain.log_format = 'json'",
  'client_min_messages = log',
  'enable_seqscan = off',
];

/** A node of a JSON plan (EXPLAIN's or auto_explain's): the fields tests read, and its children. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  /** With ANALYZE: how often the node ran. */
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** A plan's nodes, depth first (a test's own node type may add the fields it reads). */
export function planNodes<Node extends { Plans?: Node[] }>(node: Node): Node[] {
  return [node, ...(node.Plans ?? []).flatMap((child) => planNodes(child))];
}

/** A node of EXPLAIN (ANALYZE, FORMAT JSON): the rows it gave, how often, and the rows its filters threw away. */
export interface AnalyzedPlanNode extends PlanNode {
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: AnalyzedPlanNode[];
}

/**
 * The rows every node of an analyzed plan produced or threw away (a join's or a scan's filter): what
 * the statement worked through. A count, not a time: a test can bound it in the statement's rows (a
 * nested loop of two CTEs the planner expected one row of is rows × rows).
 */
export function rowsWorkedThrough(plan: AnalyzedPlanNode): number {
  return planNodes(plan).reduce(
    (sum, node) => sum + node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Join Filter'] ?? 0) + (node['Rows Removed by Filter'] ?? 0),
    0,
  );
}

/**
 * The analyzed plans of `statement` (as a store sends it) in its custom plan and in its generic one
 * (what a prepared statement settles on after a few runs), each run in a transaction rolled back.
 */
export async function analyzedInBothPlans(client: pg.ClientBase, statement: { text: string; values?: unknown[] }): Promise<AnalyzedPlanNode[]> {
  const plans: AnalyzedPlanNode[] = [];
  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: AnalyzedPlanNode }> }>({
        text: `EXPLAIN (ANALYZE, TIMING off, FORMAT JSON) ${statement.text}`,
        values: statement.values ?? [],
      });
      plans.push(rows[0]!['QUERY PLAN'][0]!.Plan);
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return plans;
}

/** The relations a plan (auto_explain's or EXPLAIN's JSON) reads with a Seq Scan. */
export function seqScansIn(plan: string): string[] {
  return [...plan.matchAll(/"Node Type": ?"Seq Scan"[^{}]*?"Relation Name": ?"(\w+)"/g)].map((match) => match[1]!);
}

/**
 * Runs `work` with a session of its own (search_path `<schema>, public`) under auto_explain, rolled back; returns its result and every plan.
 * With `analyze`, each plan node also says how often it ran and how many rows it gave ("Actual Loops", "Actual Rows"; no timing).
 */
export async function underAutoExplain<T>(
  databaseUrl: string,
  schema: string,
  work: (session: pg.Client) => Promise<T>,
  options: { analyze?: boolean } = {},
): Promise<ExplainedRun<T>> {
  const messages: string[] = [];
  const session = new pg.Client({ connectionString: databaseUrl });
  await session.connect();
  // Each message is "duration: … ms  plan:" and the plan's JSON, which names its statement.
  session.on('notice', (message: { message?: string }) => {
    if (message.message?.includes('"Plan"')) messages.push(message.message);
  });
  let result: T;
  try {
    await session.query(`SET search_path TO ${pg.escapeIdentifier(schema)}, public`);
    await session.query('BEGIN');
    await session.query("LOAD 'auto_explain'");
    for (const setting of [...settings, ...(options.analyze ? ['auto_explain.log_analyze = on', 'auto_explain.log_timing = off'] : [])]) {
      await session.query(`SET LOCAL ${setting}`);
    }
    result = await work(session);
  } finally {
    await session.query('ROLLBACK').catch(() => undefined);
    await session.end();
  }
  const plans = messages.map((message) => {
    const plan = message.slice(message.indexOf('{'));
    return { query: (JSON.parse(plan) as { 'Query Text': string })['Query Text'], plan };
  });
  return { result, plans, seqScans: plans.flatMap(({ plan }) => seqScansIn(plan)) };
}
