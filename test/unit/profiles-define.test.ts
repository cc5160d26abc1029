// defineProfile, validation and the compiler: every rule with its path.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isIronflowError } from '../../core/errors';
import { labelsMatch } from '../../core/label-expr';
import { stepRegistry } from '../../core/steps/builtin';
import { checkProfile } from '../../profiles/check';
import { AGENT_STEP_HEARTBEAT_MS, compileProfile } from '../../profiles/compiler';
import { defineProfile } from '../../profiles/defineProfile';
import { shippedProfiles } from '../../profiles/shipped';

const base = () => ({
  id: 'ubuntu-24.04-gpu-host',
  version: 1,
  target: 'metal',
  image: { ref: 'ubuntu-24.04-server@2026.09', format: 'raw', compression: 'zstd' },
  hostConfig: { 'nvidia-driver': { branch: '580' } },
  steps: [
    { use: 'boot.prepareRamdisk', on: 'site' },
    { use: 'management.setBootDevice', on: 'site', with: { device: 'pxe' } },
    { use: 'power.setPower', on: 'site', with: { action: 'cycle' } },
    { use: 'wait.agentJoined', with: { role: 'ramdisk' } },
    { use: 'disk.wipe', on: 'ramdisk', timeout: '30m' },
    { use: 'boot.kexec', on: 'ramdisk', await: 'rejoin', timeout: '15m' },
  ],
  acceptance: [{ use: 'diag.dcgm', on: 'node', with: { level: 1 } }],
  cleanup: [{ use: 'boot.cleanUp', on: 'site' }],
});

function pathOf(fn: () => unknown): { code: string; path: string } {
  try {
    fn();
  } catch (err) {
    if (isIronflowError(err)) return { code: err.code, path: String(err.details.path) };
    throw err;
  }
  throw new Error('did not throw');
}

describe('defineProfile', () => {
  it('accepts a well-formed profile and deep-freezes the copy', () => {
    const doc = base();
    const profile = defineProfile(doc);
    expect(Object.isFrozen(profile)).toBe(true);
    expect(Object.isFrozen(profile.steps[1]?.with)).toBe(true);
    expect(profile.role).toBe('host');
    expect(profile).not.toBe(doc);
  });

  it.each([
    ['an unknown field', (d: any) => (d.colour = 'red'), 'colour'],
    ['an unknown step field', (d: any) => (d.steps[2].retry = 3), 'steps[2].retry'],
    ['a malformed duration', (d: any) => (d.steps[2].timeout = '30 seconds'), 'steps[2].timeout'],
    ['a duration in days', (d: any) => (d.steps[4].timeout = '2d'), 'steps[4].timeout'],
    ['a malformed id', (d: any) => (d.id = 'Ubuntu GPU'), 'id'],
    ['a malformed step id', (d: any) => (d.steps[0].id = 'Prep!'), 'steps[0].id'],
    ['a duplicate step id', (d: any) => ((d.steps[0].id = 'a'), (d.steps[1].id = 'a')), 'steps[1].id'],
    ['a malformed use', (d: any) => (d.steps[1].use = 'setBootDevice'), 'steps[1].use'],
    ['an unknown step', (d: any) => (d.steps[1].use = 'management.setBootOrder'), 'steps[1].use'],
    ['a step on the wrong queue', (d: any) => delete d.steps[0].on, 'steps[0].on'],
    ['a `with` its schema refuses', (d: any) => (d.steps[1].with.device = 'floppy'), 'steps[1].with.device'],
    ['an unknown `with` field', (d: any) => (d.steps[2].with.force = true), 'steps[2].with.force'],
    ['a non-JSON value', (d: any) => (d.steps[1].with.device = () => 'pxe'), 'steps[1].with.device'],
    ['NaN', (d: any) => (d.version = Number.NaN), 'version'],
    ['a Date', (d: any) => (d.steps[2].with.at = new Date()), 'steps[2].with.at'],
    ['a field of the other target', (d: any) => (d.vm = { vcpus: 2, memoryMiB: 1024 }), 'vm'],
    ['hostConfig on a vm profile', (d: any) => (d.target = 'vm'), 'hostConfig'],
    ['a bad label expression', (d: any) => (d.steps[4].when = 'gpu &&'), 'steps[4].when'],
    ['a bad fallback', (d: any) => (d.steps[2].fallback = { use: 'power.setPower', on: 'site', with: { action: 'explode' } }), 'steps[2].fallback.with.action'],
    [
      'a nested fallback',
      (d: any) => (d.steps[2].fallback = { use: 'power.setPower', on: 'site', with: { action: 'on' }, fallback: {} }),
      'steps[2].fallback.fallback',
    ],
    ['bad retries', (d: any) => (d.steps[2].retries = -1), 'steps[2].retries'],
    ['a secret-named input', (d: any) => (d.steps[1].with.password = 'hunter2'), 'steps[1].with.password'],
    ['a bearer in an input', (d: any) => (d.steps[2].with.note = 'ifk_cred_01abc.abcdefghijklmnopqrstuvwxyz'), 'steps[2].with.note'],
    ['no steps', (d: any) => (d.steps = []), 'steps'],
    ['an unknown await', (d: any) => (d.steps[5].await = 'reboot'), 'steps[5].await'],
  ])('rejects %s with INVALID_CONFIG at its path', (_, change, path) => {
    const doc = base();
    change(doc);
    expect(pathOf(() => defineProfile(doc))).toEqual({ code: 'INVALID_CONFIG', path });
  });

  it('names the FIRST offending field in document order', () => {
    const doc: any = base();
    doc.steps[4].timeout = 'soon';
    doc.steps[1].with.device = 'floppy';
    doc.cleanup[0].bogus = 1;
    expect(pathOf(() => defineProfile(doc)).path).toBe('steps[1].with.device');
  });

  it('refuses a profile with userData whose deploy runs before userdata.render', () => {
    // Both steps are registered by metal (core/steps/metal.ts).
    const registry = stepRegistry.extend();
    const doc: any = base();
    doc.userData = { kind: 'cloud-init', template: 'bcd-host.yaml.hbs' };
    doc.steps.splice(4, 0, { use: 'deploy.deploy' });
    expect(pathOf(() => defineProfile(doc, registry))).toEqual({ code: 'INVALID_CONFIG', path: 'steps[4].use' });
    doc.steps.push({ use: 'userdata.render' }); // after the deploy: still wrong
    expect(pathOf(() => defineProfile(doc, registry)).path).toBe('steps[4].use');
    doc.steps.pop();
    doc.steps.unshift({ use: 'userdata.render' });
    expect(defineProfile(doc, registry).steps[0]?.use).toBe('userdata.render');
  });

  it('validation reports every problem at once, each with its path', () => {
    const doc: any = base();
    doc.colour = 'red';
    doc.steps[1].with.device = 'floppy';
    doc.steps[4].timeout = '3 weeks';
    doc.cleanup[0].use = 'boot.cleanup';
    const { problems } = checkProfile(doc, stepRegistry);
    expect(problems.map((p) => p.path)).toEqual(['steps[1].with.device', 'steps[4].timeout', 'cleanup[0].use', 'colour']);
  });
});

describe('the compiler', () => {
  it('resolves activities, queues, timeouts and RetryPolicy into the plan', () => {
    const doc: any = base();
    doc.steps[2].retries = { max: 4, initialInterval: '2s', backoffCoefficient: 1.5 };
    doc.steps[2].fallback = { use: 'power.setPower', on: 'site', with: { action: 'reset' } };
    doc.steps[3].when = 'gpu=h100 && !nvswitch';
    const plan = compileProfile(doc, 'root');
    expect(plan.profile).toEqual({ tenantId: 'root', id: 'ubuntu-24.04-gpu-host', version: 1, ref: 'ubuntu-24.04-gpu-host@1' });
    expect(plan.steps[2]).toMatchObject({
      key: 'steps[2]',
      activity: 'power.setPower',
      queue: 'site',
      route: 'site-agent',
      timeoutMs: 300_000,
      scheduleToStartMs: 30_000,
      retry: { maximumAttempts: 5, initialIntervalMs: 2000, backoffCoefficient: 1.5 },
      onFailure: 'fail',
      fallback: { key: 'steps[2].fallback', with: { action: 'reset' } },
    });
    expect(plan.steps[4]).toMatchObject({ route: 'ramdisk', timeoutMs: 1_800_000, with: { mode: 'quick' }, heartbeatMs: 30_000 });
    expect(plan.steps[5]).toMatchObject({ await: 'rejoin', timeoutMs: 900_000, retry: { maximumAttempts: 1 } });
    expect(plan.acceptance[0]).toMatchObject({ route: 'node', queue: 'node' });
    expect(plan.cleanup[0]?.key).toBe('cleanup[0]');
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan); // pure data
  });

  it('gives every step on an agent a heartbeat timeout, so a task lost on its way there is retried within it', () => {
    const plan = compileProfile(base(), 'root');
    const steps = [...plan.steps, ...plan.acceptance, ...plan.cleanup];
    const onAgents = steps.filter((step) => step.route === 'site-agent' || step.route === 'ramdisk' || step.route === 'node');
    // A kind that names its own keeps it; a kind that names none gets the default.
    expect(Object.fromEntries(onAgents.map((step) => [step.use, step.heartbeatMs]))).toEqual({
      'boot.prepareRamdisk': AGENT_STEP_HEARTBEAT_MS,
      'management.setBootDevice': 5_000,
      'power.setPower': 5_000,
      'disk.wipe': 30_000,
      'boot.kexec': AGENT_STEP_HEARTBEAT_MS,
      'diag.dcgm': 60_000,
      'boot.cleanUp': AGENT_STEP_HEARTBEAT_MS,
    });
  });

  it('refuses a secret-bearing step input: histories hold references only', () => {
    const doc: any = base();
    doc.steps[1].with.bmcToken = 'abc';
    expect(pathOf(() => compileProfile(doc, 'root'))).toEqual({ code: 'INVALID_CONFIG', path: 'steps[1].with.bmcToken' });
  });

  it('ships profiles that pass their own checks', () => {
    expect(shippedProfiles().map((p) => `${p.id}@${p.version}`)).toContain('remediate-reboot@1');
  });
});

describe('label expressions', () => {
  it('evaluates names, equality, negation and grouping', () => {
    const labels = { gpu: 'h100', nvswitch: 'true', arch: 'x86_64' };
    expect(labelsMatch('nvswitch', labels)).toBe(true);
    expect(labelsMatch('gpu=h100 && arch!=arm64', labels)).toBe(true);
    expect(labelsMatch('!nvswitch || (gpu=a100)', labels)).toBe(false);
    expect(labelsMatch(undefined, labels)).toBe(true);
  });
});
