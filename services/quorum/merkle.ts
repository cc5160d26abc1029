// The nodes a batch covers, as a Merkle tree: approvers sign the root (one signature covers
// 10,000 nodes), and each command carries only its node's path to the root, so what an agent
// receives stays small. Leaves and inner nodes are hashed with different prefixes (0x00 and
// 0x01), so an inner node can never pass for a leaf. An odd node is carried up unpaired.
import { createHash } from 'node:crypto';

export interface MerkleStep {
  /** The sibling's hash (hex). */
  hash: string;
  /** The sibling is on the left of the path. */
  left: boolean;
}

const sha = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

export const leafHash = (nodeId: string): Buffer => sha(Buffer.from([0]), Buffer.from(nodeId, 'utf8'));
const innerHash = (left: Buffer, right: Buffer): Buffer => sha(Buffer.from([1]), left, right);

function levels(nodeIds: readonly string[]): Buffer[][] {
  if (nodeIds.length === 0) throw new RangeError('a batch covers at least one node');
  const all: Buffer[][] = [nodeIds.map(leafHash)];
  while ((all[all.length - 1] as Buffer[]).length > 1) {
    const level = all[all.length - 1] as Buffer[];
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? innerHash(level[i] as Buffer, level[i + 1] as Buffer) : (level[i] as Buffer));
    all.push(next);
  }
  return all;
}

export function merkleRoot(nodeIds: readonly string[]): string {
  const all = levels(nodeIds);
  return ((all[all.length - 1] as Buffer[])[0] as Buffer).toString('hex');
}

/** The path from the node's leaf to the root (empty for a one-node batch). */
export function merkleProof(nodeIds: readonly string[], nodeId: string): MerkleStep[] {
  let index = nodeIds.indexOf(nodeId);
  if (index < 0) throw new RangeError(`${nodeId} is not in the batch`);
  const proof: MerkleStep[] = [];
  for (const level of levels(nodeIds).slice(0, -1)) {
    const sibling = index % 2 === 0 ? index + 1 : index - 1;
    if (sibling < level.length) proof.push({ hash: (level[sibling] as Buffer).toString('hex'), left: sibling < index });
    index = Math.floor(index / 2);
  }
  return proof;
}

/** Whether the path leads from the node's leaf to `root`. */
export function merkleProofValid(root: string, nodeId: string, proof: readonly MerkleStep[]): boolean {
  let hash = leafHash(nodeId);
  for (const step of proof) {
    if (!/^[0-9a-f]{64}$/.test(step.hash)) return false;
    const sibling = Buffer.from(step.hash, 'hex');
    hash = step.left ? innerHash(sibling, hash) : innerHash(hash, sibling);
  }
  return hash.toString('hex') === root;
}
