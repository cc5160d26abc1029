// A chain of workflows per node, by step count, in phases: "1,3,6;6;5" is three phases, the
// first running three workflows per node in turn (1, 3 and 6 steps), then one of 6, then one
// of 5. The fleet figure writes what a fleet ran this way; the engine side runs it with no-op steps.

export function parseChains(text: string): number[][] {
  const phases = text.split(';').map((phase) => phase.split(',').map((count) => Number(count.trim())));
  for (const chain of phases)
    if (chain.some((count) => !Number.isInteger(count) || count < 1))
      throw new Error(`chains "${text}": each phase is a comma list of step counts (whole numbers ≥ 1), phases separated by ';'`);
  return phases;
}

export const formatChains = (phases: number[][]): string => phases.map((chain) => chain.join(',')).join(';');
