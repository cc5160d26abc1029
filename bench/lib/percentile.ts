/** The p-th percentile of an ascending list (nearest rank), NaN when empty. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
