import type { EntityManager } from '@mikro-orm/postgresql';
import { admissionChanged } from '../db/admission-changes.ts';
import { APPROVAL_SETTINGS, Membership, Organization, type ApprovalSetting, type IOrganization } from '../db/entities/index.ts';
import { ACCESS } from './access.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { isPlan, type Plan } from '../lib/plans.ts';

export interface OrgView {
  id: string;
  name: string;
  plan: Plan;
}

export const orgView = (o: IOrganization): OrgView => ({ id: o.id, name: o.name, plan: o.plan });

function checkPlan(plan: string): Plan {
  if (!isPlan(plan)) throw errors.validation([{ path: 'plan', message: 'must be one of FREE, PRO, TEAM, ENTERPRISE' }]);
  return plan;
}

export async function createOrganization(em: EntityManager, input: { name: string; plan?: string }): Promise<OrgView> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw errors.validation([{ path: 'name', message: 'must be 1 to 200 characters' }]);
  const org = em.create(Organization, { id: newId('org'), name, plan: checkPlan(input.plan ?? 'PRO') });
  await em.flush();
  return orgView(org);
}

export async function getOrganization(em: EntityManager, id: string): Promise<IOrganization> {
  const org = await em.findOne(Organization, { id });
  if (!org) throw new ApiError('not_found', `Organization ${id} not found.`);
  return org;
}

/** The approval settings (domain/posts/approval.ts): whose posts wait, and whether a preview link may decide. */
export async function setApprovalSettings(
  em: EntityManager,
  id: string,
  input: { approval?: string; previewDecisions?: boolean },
): Promise<OrgView & { approval: ApprovalSetting; previewDecisions: boolean; warning: string | null }> {
  const org = await getOrganization(em, id);
  if (input.approval !== undefined) {
    if (!(APPROVAL_SETTINGS as readonly string[]).includes(input.approval))
      throw errors.validation([{ path: 'approval', message: `must be one of ${APPROVAL_SETTINGS.join(', ')}` }]);
    org.approval = input.approval as ApprovalSetting;
  }
  if (input.previewDecisions !== undefined) org.previewDecisions = input.previewDecisions;
  await em.flush();
  return { ...orgView(org), approval: org.approval, previewDecisions: org.previewDecisions, warning: await approvalWarning(em, id) };
}

/**
 * Four eyes (domain/access.ts) needs a second approver where approvers' own posts wait too: under
 * `everyone` with a single member who may approve, that member's posts can never be approved.
 * The words to tell the organization, or null.
 */
export async function approvalWarning(em: EntityManager, id: string): Promise<string | null> {
  const org = await getOrganization(em, id);
  if (org.approval !== 'everyone') return null;
  const roles = ACCESS['posts.approve'].roles;
  const approvers = await em.count(Membership, { organization: id, role: { $in: roles } });
  if (approvers >= 2) return null;
  return `Every post waits for approval, but only one member may approve (${roles.join(', ')}): nobody decides their own post, so that member's posts can never be approved. Give a second member one of those roles.`;
}

export async function setOrganizationPlan(em: EntityManager, id: string, plan: string): Promise<OrgView> {
  const checked = checkPlan(plan);
  const org = await getOrganization(em, id);
  org.plan = checked;
  await em.flush();
  admissionChanged({ organizationId: id });
  return orgView(org);
}
