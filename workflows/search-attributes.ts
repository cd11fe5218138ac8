// Custom search attributes, so posts can be found in the Temporal web UI
// (e.g. `PostId = "post_…"` or `OrganizationId = "org_…"`).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);
export const POST_ID = defineSearchAttributeKey('PostId', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [ORGANIZATION_ID, POST_ID];
