// Every workflow the worker runs. Deterministic code only (DESIGN.md §5): no Node built-ins,
// no I/O, activities imported as types.
export { pingWorkflow } from './ping.ts';
export { postWorkflow, postWorkflowV2 } from './post.ts';
export { mediaUploadWorkflow } from './media-upload.ts';
export { webhookDeliveriesWorkflow, webhookDeliveryWorkflow } from './webhook-delivery.ts';
export { webhookOutboxSweepWorkflow } from './webhook-outbox-sweep.ts';
export { postStartReconcilerWorkflow } from './post-reconciler.ts';
export { seriesWorkflow } from './series.ts';
export { webhookFanoutWorkflow } from './webhook-fanout.ts';
export { metricsSweepWorkflow } from './metrics-sweep.ts';
export { feedPollWorkflow } from './feed-poll.ts';
export { commentsSweepWorkflow } from './comments-sweep.ts';
export { commentReplyWorkflow, commentModerationWorkflow } from './comment-actions.ts';
