// The metrics sweep's contract (domain/analytics/metrics.ts): a Temporal Schedule
// (worker/schedules.ts) runs this workflow every minute; its activity reads the metrics that fell
// due (activities/metrics.ts). The state is in Postgres (post_channels.metrics_next_at), not in a
// workflow per post: the worker's memory does not grow with the posts followed. Plain data only;
// the names are durable (the schedule and recorded histories carry them) — never rename.

/** The workflow type (workflows/metrics-sweep.ts, registered by its export in workflows/index.ts). */
export const METRICS_SWEEP_WORKFLOW_TYPE = 'metricsSweepWorkflow';
/** The Temporal Schedule that runs it (worker/schedules.ts). */
export const METRICS_SWEEP_SCHEDULE_ID = 'postpilot-metrics-sweep';

export interface MetricsSweepInput {
  /** Channel posts read per activity at most. */
  limit: number;
  /** Activities per run at most; a run that read a full batch takes the next, the next run the rest. */
  rounds: number;
  /** Only this post, every published channel of it, now: a reading asked for (POST /v1/posts/{id}/analytics/refresh). */
  postId?: string;
}

/** The workflow id of a post's asked-for reading: one at a time per post. */
export const metricsRefreshWorkflowId = (postId: string) => `metrics-refresh-${postId}`;

export interface MetricsSweepSummary {
  read: number;
  failed: number;
  stopped: number;
}

export type MetricsSweepWorkflow = (input: MetricsSweepInput) => Promise<MetricsSweepSummary>;

export const METRICS_SWEEP_EVERY = '1 minute';
export const METRICS_SWEEP_INPUT: MetricsSweepInput = { limit: 500, rounds: 10 };
