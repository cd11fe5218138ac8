// Custom search attributes, so posts can be found in the Temporal web UI
// (e.g. `PostId = "post_…"` or `OrganizationId = "org_…"`).
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);
export const POST_ID = defineSearchAttributeKey('PostId', SearchAttributeType.KEYWORD);
export const SEARCH_ATTRIBUTES = [ORGANIZATION_ID, POST_ID];

/** A post workflow's `typedSearchAttributes`, the same for every start of one (the create, a retry run, the reconciler). */
export function postSearchAttributes(organizationId: string, postId: string): SearchAttributePair[] {
  return [
    { key: ORGANIZATION_ID, value: organizationId },
    { key: POST_ID, value: postId },
  ];
}
