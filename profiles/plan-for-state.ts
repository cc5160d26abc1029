// The plan a node's current state runs: the state's shipped profile (the -oob variant on an
// agentless pool) or, in deploying, the profile metal.deploy named, compiled, with what the
// node knows filled in so the history shows it: the enrolled identity for inventory.refresh,
// the chosen wipe for a release, the profile's image for deploy.deploy.
import type { Node } from '../generated/prisma-sqlite/client';
import type { Db } from '../services/db';
import { IronflowError } from '../core/errors';
import { isAgentless } from '../services/metal/transition';
import { BUILTIN_TENANT } from '../core/permissions';
import type { JsonObject, Plan, PlanStep, ProvisionTarget } from '../core/plan';
import { workflowFor } from '../core/provision-states';
import { acceptancePlan } from './acceptance-plan';
import { retireWipeWith } from './retire-wipe';
import { adoptedRetirePlan } from './adopted-retire-plan';
import { compileProfile } from './compiler';
import { poolStepTimeouts, withStepTimeouts } from './pool-step-timeouts';
import { shippedProfiles } from './shipped';
import { lockProfileVersion, resolveProfile } from './store';
import { poolPolicyOf } from '../services/pools/pool-policy';

export type StatePlan = { kind: 'rest' } | { kind: 'unsupported'; message: string } | { kind: 'run'; workflowId: string; plan: Plan; target: ProvisionTarget };

function fill(steps: PlanStep[], node: Node, plan: Plan, retireWipe?: JsonObject): PlanStep[] {
  const out: PlanStep[] = [];
  for (const step of steps) {
    let w: JsonObject = step.with;
    if (step.use === 'inventory.refresh' && w.expect === undefined) {
      const macs = Array.isArray(node.macs) ? (node.macs as string[]) : [];
      w = { ...w, expect: { ...(node.productUuid ? { productUuid: node.productUuid } : {}), ...(macs.length ? { macs } : {}) } };
    }
    if (step.use === 'disk.wipe' && node.provisionState === 'releasing' && node.releaseWipe) {
      if (node.releaseWipe === 'none') continue;
      w = { ...w, mode: node.releaseWipe };
    }
    if (step.use === 'disk.wipe' && retireWipe) {
      const { fallback: _profiles, ...rest } = w;
      w = { ...rest, ...retireWipe };
    }
    if (step.use === 'deploy.deploy' && w.image === undefined && plan.image) w = { ...w, image: plan.image };
    out.push({ ...step, with: w, ...(step.fallback ? { fallback: fill([step.fallback], node, plan, retireWipe)[0] } : {}) });
  }
  return out;
}

/** adopting: the pool's acceptance checks (no provision profile; spec 004). */
async function adoptionPlan(db: Db, node: Node): Promise<Plan> {
  return acceptancePlan((await poolPolicyOf(db, node.poolId))?.acceptanceChecks ?? []);
}

export async function planForState(db: Db, node: Node): Promise<StatePlan> {
  if (node.provisionState === 'adopting') {
    if (!node.workflowId) return { kind: 'rest' };
    return {
      kind: 'run',
      workflowId: node.workflowId,
      plan: await adoptionPlan(db, node),
      target: { tenantId: node.tenantId, nodeId: node.id, siteId: node.siteId, provisionState: 'adopting', labels: {} },
    };
  }
  const workflow = workflowFor(node.provisionState, node.provisionPhase, await isAgentless(db, node.poolId));
  if (!workflow || !node.workflowId) return { kind: 'rest' };
  if (workflow.kind === 'unsupported') return { kind: 'unsupported', message: workflow.reason };
  let plan: Plan;
  if (workflow.kind === 'deploy-profile') {
    const ref = node.deployProfile as { id?: string; version?: number } | null;
    if (!ref?.id || !ref.version) throw new IronflowError('INVALID_STATE', `node ${node.id} is deploying without a deploy profile`, {});
    const view = await resolveProfile(db, node.tenantId, ref.id, ref.version);
    plan = compileProfile(view.document, view.tenantId);
    await lockProfileVersion(db, view);
  } else if (node.provisionState === 'retiring' && node.bmcAddress === null) {
    plan = adoptedRetirePlan(); // an adopted machine: no BMC to power off, nothing we imaged to erase
  } else {
    const { id, version } = workflow.profile;
    const shipped = shippedProfiles().find((p) => p.id === id && p.version === version);
    if (!shipped) throw new IronflowError('INTERNAL', `shipped profile ${id}@${version} is missing`, {});
    plan = compileProfile(withStepTimeouts(shipped, await poolStepTimeouts(db, node)), BUILTIN_TENANT);
  }
  const retireWipe = node.provisionState === 'retiring' ? await retireWipeWith(db, node) : undefined;
  plan = { ...plan, steps: fill(plan.steps, node, plan, retireWipe), acceptance: fill(plan.acceptance, node, plan, retireWipe) };
  const labels = node.labels && typeof node.labels === 'object' ? (node.labels as Record<string, string>) : {};
  return {
    kind: 'run',
    workflowId: node.workflowId,
    plan,
    target: { tenantId: node.tenantId, nodeId: node.id, siteId: node.siteId, provisionState: node.provisionState as string, labels },
  };
}
