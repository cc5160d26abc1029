// A metal node's view (core/metal/view.ts) from a row: labels keep only their string values,
// timestamps are ISO strings, and the BMC's credentials show only as whether they are set.
import { describe, expect, it } from 'vitest';
import { metalView, metalViewColumns, type MetalViewRow } from '../../core/metal/view';

const row = (fields: Partial<MetalViewRow>): MetalViewRow =>
  ({ ...Object.fromEntries(metalViewColumns.map((column) => [column, null])), maintenance: false, version: 1, uefi: true, ...fields }) as MetalViewRow;

describe('metal node view', () => {
  it('keeps string labels only, writes ISO timestamps, and never the credentials reference', () => {
    const createdAt = new Date('2026-01-02T03:04:05.006Z');
    const view = metalView(
      row({
        id: 'node_a',
        labels: { rack: 'r1', weight: 3, nested: { a: 'b' }, tier: 'gold' },
        bmcCredentialsRef: 'sec_x',
        createdAt,
        updatedAt: new Date('2026-12-31T23:59:59.999Z'),
      }),
    );
    expect(view.labels).toEqual({ rack: 'r1', tier: 'gold' });
    expect([view.createdAt, view.updatedAt]).toEqual(['2026-01-02T03:04:05.006Z', '2026-12-31T23:59:59.999Z']);
    expect(view.bmc).toEqual({ driver: null, address: null, credentialsSet: true });
    expect(JSON.stringify(view)).not.toContain('sec_x');
  });

  it('answers no labels for a row whose labels are not an object', () => {
    for (const labels of [null, 'r1', ['r1'], 7]) expect(metalView(row({ labels, createdAt: new Date(0), updatedAt: new Date(0) })).labels).toEqual({});
  });
});
