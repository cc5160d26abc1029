// A figure of `npm run bench`: it measures Ironflow and its peer in the same run and returns
// the markdown table (medians, the ratio) and the charts to draw beside it.
import type { Chart } from '../lib/plot';

export interface FigureResult {
  table: string;
  charts: Array<{ file: string; chart: Chart }>;
}

export interface MeasureOptions {
  quick: boolean;
  /** The fleet sizes to run (`--fleet-sizes 10,100,1000`) instead of the figure's own. */
  fleetSizes?: number[];
  /** The fleet size run on the cluster profile with 1 and 2 worker processes (`--fleet-cluster-size N`, 0: none) instead of the figure's own. */
  fleetClusterSize?: number;
  progress: (done: number, total: number, text: string) => void;
}

export interface Figure {
  /** Its section in bench/README.md: `<!-- bench:<id> -->` … `<!-- /bench:<id> -->`. */
  id: string;
  title: string;
  measure(options: MeasureOptions): Promise<FigureResult>;
}
