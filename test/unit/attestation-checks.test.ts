// The pure parts of attested results: canonical JSON is the same bytes whatever the key
// order (and after a JSON round trip, as through Temporal's payload converter), and a
// verified result must still say what the step needs: the wipe mode asked for with every disk
// read back, the DCGM level asked for with every test passed, from an accepted source.
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../core/attestations/canonical-json';
import { checkAttestedResult } from '../../services/attestations/results';
import { IronflowError } from '../../core/errors';
import type { JsonObject } from '../../core/plan';

function refusal(use: string, result: JsonObject, w: JsonObject, allowEmulatedMachines = false): { code: string; reason: unknown } | undefined {
  try {
    checkAttestedResult(use, 'steps[2]', result, { with: w, allowEmulatedMachines });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(IronflowError);
    return { code: (error as IronflowError).code, reason: (error as IronflowError).details.reason };
  }
}

describe('canonicalJson', () => {
  it('sorts keys at every depth, drops undefined members, and survives a JSON round trip', () => {
    const value = { b: [3, { z: 1, a: 'x' }, null], a: { d: true, c: 1.5 }, u: undefined };
    expect(canonicalJson(value)).toBe('{"a":{"c":1.5,"d":true},"b":[3,{"a":"x","z":1},null]}');
    expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(canonicalJson({ a: { d: true, c: 1.5 }, b: [3, { a: 'x', z: 1 }, null] }));
    expect(canonicalJson('é"\n')).toBe(JSON.stringify('é"\n'));
  });
});

describe('checkAttestedResult', () => {
  const disks = [
    { name: 'disk0', readBack: true },
    { name: 'disk1', readBack: true },
  ];

  it('counts a wipe in the mode asked for with every disk read back', () => {
    expect(refusal('disk.wipe', { mode: 'quick', disks }, { mode: 'quick' })).toBeUndefined();
    expect(refusal('disk.wipe', { mode: 'quick', disks }, {})).toBeUndefined(); // quick is the default
    // A disk that cannot crypto-erase got the step's stated fallback.
    const mixed: JsonObject[] = [
      { name: 'nvme0n1', mode: 'crypto-erase', readBack: true },
      { name: 'disk1', mode: 'secure-erase', fallbackFrom: 'crypto-erase', readBack: true },
    ];
    expect(refusal('disk.wipe', { mode: 'crypto-erase', disks: mixed }, { mode: 'crypto-erase', fallback: 'secure-erase' })).toBeUndefined();
    expect(refusal('disk.wipe', { mode: 'crypto-erase', disks: mixed }, { mode: 'crypto-erase' })).toEqual({
      code: 'UNVERIFIED_WIPE',
      reason: 'wipe-mode-mismatch',
    });
  });

  it('refuses another mode, a disk that did not read back, no disks, and a result of another shape with UNVERIFIED_WIPE', () => {
    expect(refusal('disk.wipe', { mode: 'quick', disks }, { mode: 'secure-erase' })).toEqual({ code: 'UNVERIFIED_WIPE', reason: 'wipe-mode-mismatch' });
    expect(refusal('disk.wipe', { mode: 'quick', disks: [...disks, { name: 'disk2', readBack: false }] }, { mode: 'quick' })).toEqual({
      code: 'UNVERIFIED_WIPE',
      reason: 'wipe-read-back-failed',
    });
    expect(refusal('disk.wipe', { mode: 'quick', disks: [] }, { mode: 'quick' })).toEqual({ code: 'UNVERIFIED_WIPE', reason: 'result-malformed' });
    expect(refusal('disk.wipe', { attested: true }, { mode: 'quick' })).toEqual({ code: 'UNVERIFIED_WIPE', reason: 'result-malformed' });
  });

  it('counts a DCGM run from dcgmi or a machine without GPUs; an emulated one only where the pool allows emulated machines', () => {
    const tests = [{ name: 'memory', passed: true }];
    expect(refusal('diag.dcgm', { level: 2, tests, source: 'dcgmi' }, { level: 2 })).toBeUndefined();
    expect(refusal('diag.dcgm', { level: 3, tests, source: 'dcgmi' }, { level: 2 })).toBeUndefined();
    expect(refusal('diag.dcgm', { level: 2, tests: [], source: 'no-gpus' }, { level: 2 })).toBeUndefined();
    expect(refusal('diag.dcgm', { level: 2, tests, source: 'emulated' }, { level: 2 })).toEqual({ code: 'PERMISSION_DENIED', reason: 'emulated-machine' });
    expect(refusal('diag.dcgm', { level: 2, tests, source: 'emulated' }, { level: 2 }, true)).toBeUndefined();
  });

  it('refuses a lower level, a failed test, no tests from dcgmi, and an unknown source', () => {
    expect(refusal('diag.dcgm', { level: 1, tests: [{ name: 'memory', passed: true }], source: 'dcgmi' }, { level: 2 })).toEqual({
      code: 'PERMISSION_DENIED',
      reason: 'dcgm-level-mismatch',
    });
    expect(refusal('diag.dcgm', { level: 2, tests: [{ name: 'pcie', passed: false }], source: 'dcgmi' }, { level: 2 })).toEqual({
      code: 'PERMISSION_DENIED',
      reason: 'dcgm-failed',
    });
    expect(refusal('diag.dcgm', { level: 2, tests: [], source: 'dcgmi' }, { level: 2 })).toEqual({ code: 'PERMISSION_DENIED', reason: 'dcgm-no-tests' });
    expect(refusal('diag.dcgm', { level: 2, tests: [], source: 'machine', passed: true }, { level: 2 })).toEqual({
      code: 'PERMISSION_DENIED',
      reason: 'result-malformed',
    });
  });
});
