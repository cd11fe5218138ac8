// The ping workflow's contract (workflows/ping.ts): its type name, signature and input.
export interface PingInput {
  message: string;
  /** Optional durable delay before the activity runs (ms or a duration string). */
  delay?: string | number;
}

export const PING_WORKFLOW_TYPE = 'pingWorkflow';
export type PingWorkflow = (input: PingInput) => Promise<{ echo: string; database: string }>;
