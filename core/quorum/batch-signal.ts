// The signal an approval sends the workflow a batch serves, so it stops waiting at once
// (the workflow also looks again on its own: a lost signal only delays it).
export const QUORUM_BATCH_SIGNAL = 'quorumBatch';
