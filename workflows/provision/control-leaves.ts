// A provision run's bookkeeping leaves on the control plane (its boot state and boot entries,
// its boot slot, its ramdisk's queue, its image): local activities since 2026-12-02, a marker
// each in the history (../local-bookkeeping.ts).
import { nonRetryableCodes } from '../../core/errors';
import { localBookkeeping } from '../local-bookkeeping';

/** The leaves of `A` as the run calls them: `controlLeaves<A>()()['name'](input)`. */
export const controlLeaves = <A>(): (() => A) =>
  localBookkeeping<A>('provision-local-leaves', {
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 10, maximumInterval: '5 seconds', nonRetryableErrorTypes: [...nonRetryableCodes] },
  });
