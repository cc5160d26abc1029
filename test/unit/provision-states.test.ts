// The provision state table against the spec's own tables (004: "The provision state
// machine", "The metal API group", "Failure and recovery"), every verb × every state.
import { describe, expect, it } from 'vitest';
import { IronflowError } from '../../core/errors';
import {
  checkPowerAllowed,
  completeMove,
  failMove,
  isSchedulable,
  provisionStates,
  provisionVerbs,
  verbMove,
  workflowFor,
  type ProvisionState,
  type ProvisionVerb,
} from '../../core/provision-states';

// Copied from the spec's "metal API group" table, not from the code.
const spec: Record<ProvisionVerb, { from: string[]; to: string }> = {
  manage: { from: ['ready'], to: 'enrolling' },
  inspect: { from: ['ready'], to: 'inspecting' },
  provide: { from: ['ready'], to: 'commissioning' },
  deploy: { from: ['ready'], to: 'deploying' },
  release: { from: ['deployed', 'rescue'], to: 'releasing' },
  rescue: { from: ['deployed'], to: 'rescue' },
  unrescue: { from: ['rescue'], to: 'rescue' },
  abort: { from: ['enrolling', 'inspecting', 'commissioning', 'deploying', 'releasing'], to: 'failed' },
  recover: { from: ['failed'], to: '(table)' },
  retire: { from: ['adopting', 'adopted', 'enrolling', 'ready', 'failed'], to: 'retiring' },
};

const recoverSpec: Record<string, string> = {
  enrolling: 'enrolling',
  inspecting: 'enrolling',
  commissioning: 'enrolling',
  deploying: 'releasing',
  releasing: 'releasing',
  rescue: 'deployed',
  retiring: 'retiring',
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof IronflowError ? err.code : 'not-an-IronflowError';
  }
}

describe('the provision state table', () => {
  it('knows exactly the spec’s thirteen states and ten verbs', () => {
    expect([...provisionStates].sort()).toEqual(
      [
        'adopting',
        'adopted',
        'enrolling',
        'inspecting',
        'commissioning',
        'ready',
        'deploying',
        'deployed',
        'releasing',
        'rescue',
        'failed',
        'retiring',
        'retired',
      ].sort(),
    );
    expect([...provisionVerbs].sort()).toEqual(Object.keys(spec).sort());
  });

  for (const verb of provisionVerbs) {
    for (const state of provisionStates) {
      const legal = spec[verb].from.includes(state);
      it(`${verb} from ${state} is ${legal ? 'legal' : 'INVALID_STATE'}`, () => {
        const node = { state, failedFrom: state === 'failed' ? 'deploying' : null, phase: state === 'rescue' ? 'booted' : null };
        if (!legal) {
          expect(codeOf(() => verbMove(verb, node))).toBe('INVALID_STATE');
          return;
        }
        const move = verbMove(verb, node);
        expect(move.to).toBe(verb === 'recover' ? 'releasing' : spec[verb].to);
      });
    }
  }

  it('a node that is not a metal node (no state) refuses every verb', () => {
    for (const verb of provisionVerbs) expect(codeOf(() => verbMove(verb, { state: null }))).toBe('INVALID_STATE');
  });

  it('rescue enters the booting phase; unrescue the unrescuing phase', () => {
    expect(verbMove('rescue', { state: 'deployed' })).toEqual({ to: 'rescue', phase: 'booting' });
    expect(verbMove('unrescue', { state: 'rescue', phase: 'booted' })).toEqual({ to: 'rescue', phase: 'unrescuing' });
  });

  for (const [failedFrom, target] of Object.entries(recoverSpec)) {
    it(`recover after a failure in ${failedFrom} goes to ${target}`, () => {
      expect(verbMove('recover', { state: 'failed', failedFrom }).to).toBe(target);
    });
  }

  it('recover never goes straight to ready, and needs a failedFrom', () => {
    for (const failedFrom of provisionStates) {
      const code = codeOf(() => verbMove('recover', { state: 'failed', failedFrom }));
      if (failedFrom in recoverSpec) expect(verbMove('recover', { state: 'failed', failedFrom }).to).not.toBe('ready');
      else expect(code).toBe('INVALID_STATE');
    }
    expect(codeOf(() => verbMove('recover', { state: 'failed', failedFrom: null }))).toBe('INVALID_STATE');
    expect(codeOf(() => verbMove('recover', { state: 'retired', failedFrom: 'retiring' }))).toBe('INVALID_STATE');
  });

  it('complete chains enrolling → inspecting → commissioning → ready, deploying → deployed, retiring → retired', () => {
    expect(completeMove({ state: 'enrolling' }).to).toBe('inspecting');
    expect(completeMove({ state: 'inspecting' }).to).toBe('commissioning');
    expect(completeMove({ state: 'commissioning' }).to).toBe('ready');
    expect(completeMove({ state: 'deploying' }).to).toBe('deployed');
    expect(completeMove({ state: 'retiring' }).to).toBe('retired');
  });

  it('a release reaches ready only with a verified wipe, else UNVERIFIED_WIPE', () => {
    expect(completeMove({ state: 'releasing' }, { wipeVerified: true }).to).toBe('ready');
    expect(codeOf(() => completeMove({ state: 'releasing' }, { wipeVerified: false }))).toBe('UNVERIFIED_WIPE');
    expect(codeOf(() => completeMove({ state: 'releasing' }))).toBe('UNVERIFIED_WIPE');
  });

  it('ready is reachable only through commissioning or a verified release', () => {
    const into: string[] = [];
    for (const state of provisionStates) {
      for (const wipeVerified of [true, false]) {
        for (const phase of [null, 'booting', 'unrescuing']) {
          try {
            if (completeMove({ state, phase }, { wipeVerified }).to === 'ready') into.push(`${state}${wipeVerified ? '+verified' : ''}`);
          } catch {
            // not a workflow-driven state, or refused
          }
        }
      }
      for (const verb of provisionVerbs) {
        for (const failedFrom of provisionStates) {
          try {
            if (verbMove(verb, { state, failedFrom, phase: 'booted' }).to === 'ready') into.push(`${verb} from ${state}`);
          } catch {
            // illegal
          }
        }
      }
    }
    expect([...new Set(into)].sort()).toEqual(['commissioning', 'commissioning+verified', 'releasing+verified']);
  });

  it('complete in rescue: booting → booted (rests), unrescuing → deployed', () => {
    expect(completeMove({ state: 'rescue', phase: 'booting' })).toEqual({ to: 'rescue', phase: 'booted' });
    expect(completeMove({ state: 'rescue', phase: 'unrescuing' })).toEqual({ to: 'deployed', phase: null });
  });

  it('fail lands every workflow-driven state in failed with failedFrom, and nothing else', () => {
    for (const state of provisionStates) {
      const driven = ['enrolling', 'inspecting', 'commissioning', 'deploying', 'releasing', 'retiring', 'rescue'].includes(state);
      if (driven) expect(failMove({ state })).toEqual({ to: 'failed', phase: null, failedFrom: state });
      else expect(codeOf(() => failMove({ state }))).toBe('INVALID_STATE');
      if (!driven) expect(codeOf(() => completeMove({ state }))).toBe('INVALID_STATE');
    }
  });

  it('runs one shipped profile per workflow-driven state; deploying runs metal.deploy’s; agentless pools the -oob variants', () => {
    const ref = (state: ProvisionState, agentless: boolean, phase: string | null = null) => {
      const w = workflowFor(state, phase, agentless);
      if (!w) return null;
      return w.kind === 'profile' ? `${w.profile.id}@${w.profile.version}` : w.kind;
    };
    expect(ref('enrolling', false)).toBe('metal-enroll@1');
    expect(ref('inspecting', false)).toBe('metal-inspect@1');
    expect(ref('commissioning', false)).toBe('metal-commission@1');
    expect(ref('releasing', false)).toBe('metal-release@1');
    expect(ref('retiring', false)).toBe('metal-retire@1');
    expect(ref('rescue', false, 'booting')).toBe('metal-rescue@1');
    expect(ref('rescue', false, 'unrescuing')).toBe('metal-unrescue@1');
    expect(ref('rescue', false, 'booted')).toBeNull();
    expect(ref('deploying', false)).toBe('deploy-profile');
    expect(ref('deploying', true)).toBe('deploy-profile');
    expect(ref('inspecting', true)).toBe('metal-inspect-oob@1');
    expect(ref('commissioning', true)).toBe('metal-commission-oob@1');
    expect(ref('releasing', true)).toBe('metal-release-oob@1');
    expect(ref('retiring', true)).toBe('metal-retire-oob@1');
    expect(ref('rescue', true, 'booting')).toBe('unsupported');
    for (const state of ['adopting', 'adopted', 'ready', 'deployed', 'failed', 'retired'] as const) {
      expect(ref(state, false)).toBeNull();
      expect(ref(state, true)).toBeNull();
    }
  });

  it('only adopted and deployed are schedulable', () => {
    expect(provisionStates.filter((s) => isSchedulable(s))).toEqual(['adopted', 'deployed']);
  });

  it('power is refused in inspecting, commissioning, deploying, releasing (and retired), allowed elsewhere', () => {
    for (const state of provisionStates) {
      const blocked = ['inspecting', 'commissioning', 'deploying', 'releasing', 'retired'].includes(state);
      expect(codeOf(() => checkPowerAllowed(state))).toBe(blocked ? 'INVALID_STATE' : undefined);
    }
  });
});
