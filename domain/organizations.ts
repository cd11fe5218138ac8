import type { EntityManager } from '@mikro-orm/postgresql';
import { admissionChanged } from '../db/admission-changes.ts';
import { APPROVAL_SETTINGS, Organization, type ApprovalSetting, type IOrganization } from '../db/entities/index.ts';
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
): Promise<OrgView & { approval: ApprovalSetting; previewDecisions: boolean }> {
  const org = await getOrganization(em, id);
  if (input.approval !== undefined) {
    if (!(APPROVAL_SETTINGS as readonly string[]).includes(input.approval))
      throw errors.validation([{ path: 'approval', message: `must be one of ${APPROVAL_SETTINGS.join(', ')}` }]);
    org.approval = input.approval as ApprovalSetting;
  }
  if (input.previewDecisions !== undefined) org.previewDecisions = input.previewDecisions;
  await em.flush();
  return { ...orgView(org), approval: org.approval, previewDecisions: org.previewDecisions };
}

export async function setOrganizationPlan(em: EntityManager, id: string, plan: string): Promise<OrgView> {
  const checked = checkPlan(plan);
  const org = await getOrganization(em, id);
  org.plan = checked;
  await em.flush();
  admissionChanged({ organizationId: id });
  return orgView(org);
}
