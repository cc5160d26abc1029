import { describe, expect, it } from 'vitest';
import { AGENT_SESSION_FRESH_MS, isConnected, isRamdiskQueueOf, ramdiskQueue, sessionIntervalMsFor } from '../../core/agent-queues';
import { agentTaskQueue } from '../../core/joins/certificate-policy';
import { agentKeyTag } from '../../services/pki/key-tag';

const at = new Date('2026-12-01T12:00:00Z');
const later = (ms: number) => at.getTime() + ms;

describe("agents' sessions", () => {
  it('beat every 5 s for site agents, every 15 s for ramdisks, every 60 s for installed nodes’ agents of deployed or adopted machines and 15 s in any other state', () => {
    expect(sessionIntervalMsFor('site')).toBe(5_000);
    expect(sessionIntervalMsFor('ramdisk')).toBe(15_000);
    expect(sessionIntervalMsFor('ramdisk', 'deployed')).toBe(15_000);
    for (const state of ['deploying', 'releasing', 'adopting', 'rescue', null, undefined]) expect(sessionIntervalMsFor('node', state)).toBe(15_000);
    expect(sessionIntervalMsFor('node', 'deployed')).toBe(60_000);
    expect(sessionIntervalMsFor('node', 'adopted')).toBe(60_000);
  });

  it('count as connected for three of the longest interval their role is given, so two missed beats leave them connected', () => {
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS - 1), 'site')).toBe(true);
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS), 'site')).toBe(false);
    expect(isConnected(at, later(AGENT_SESSION_FRESH_MS), 'ramdisk')).toBe(true);
    expect(isConnected(at, later(45_000), 'ramdisk')).toBe(false);
    expect(isConnected(at, later(179_999), 'node')).toBe(true);
    expect(isConnected(at, later(180_000), 'node')).toBe(false);
  });
});

describe("agents' queues", () => {
  const spki = (fill: number) => new Uint8Array(91).fill(fill);

  it('a ramdisk serves a queue of its boot’s own, named by its key; a site or node agent, its role’s', () => {
    const ramdisk = { role: 'ramdisk', siteId: 'site_a', nodeId: 'node_m' };
    const firstBoot = agentTaskQueue({ ...ramdisk, keyTag: agentKeyTag(spki(1)) });
    const secondBoot = agentTaskQueue({ ...ramdisk, keyTag: agentKeyTag(spki(2)) });
    expect(firstBoot).toMatch(/^ramdisk\.node_m\.[0-9a-f]{16}$/);
    expect(secondBoot).not.toBe(firstBoot);
    expect(agentTaskQueue({ ...ramdisk, keyTag: agentKeyTag(spki(1)) })).toBe(firstBoot);
    expect(agentTaskQueue({ role: 'site', siteId: 'site_a', nodeId: 'node_s', keyTag: agentKeyTag(spki(3)) })).toBe('site.site_a.node_s');
    expect(agentTaskQueue({ role: 'node', siteId: 'site_a', nodeId: 'node_m', keyTag: agentKeyTag(spki(4)) })).toBe('node.node_m');
  });

  it('a workflow follows only a ramdisk queue of its own node', () => {
    const tag = agentKeyTag(spki(1));
    expect(isRamdiskQueueOf(ramdiskQueue('node_m', tag), 'node_m')).toBe(true);
    expect(isRamdiskQueueOf(ramdiskQueue('node_other', tag), 'node_m')).toBe(false);
    expect(isRamdiskQueueOf(ramdiskQueue('node_m', tag.toUpperCase()), 'node_m')).toBe(false);
    expect(isRamdiskQueueOf(`ramdisk.node_m`, 'node_m')).toBe(false);
    expect(isRamdiskQueueOf(`ramdisk.node_m.${tag}.x`, 'node_m')).toBe(false);
    expect(isRamdiskQueueOf('node.node_m', 'node_m')).toBe(false);
    expect(isRamdiskQueueOf(undefined, 'node_m')).toBe(false);
  });
});
