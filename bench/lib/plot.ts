// Line charts for bench/README.md: an SVG drawn here (no charting library), rendered to PNG by
// Debian's chromium (the browser the console tests use), so a plot is a file beside its table.
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM_BINARY, requireChromium } from '../../test/helpers/browser';

export interface Series {
  name: string;
  points: Array<[number, number]>;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** `log` for values spanning decades (latencies from a millisecond to seconds); default linear from 0. */
  yScale?: 'linear' | 'log';
  series: Series[];
}

const PLOT_WIDTH = 500;
const HEIGHT = 420;
const MARGIN = { left: 70, top: 40, bottom: 50 };
/** The legend's room: its swatch, then each name at about this many pixels a character of the 12 px font. */
const LEGEND_SWATCH = 34;
const LEGEND_CHAR = 7;
/** Distinct colours (matplotlib's tab10); series past them repeat a colour dashed. */
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

/** The chart's width: the plot and a legend wide enough for its longest name. */
const widthOf = (chart: Chart) => MARGIN.left + PLOT_WIDTH + 16 + LEGEND_SWATCH + LEGEND_CHAR * Math.max(0, ...chart.series.map((s) => s.name.length)) + 10;

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Five round ticks from 0 to at least max. */
function ticks(max: number): number[] {
  const step = 10 ** Math.floor(Math.log10(Math.max(max, 1e-9) / 4));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => s * 4 >= max) ?? step * 10;
  return [0, 1, 2, 3, 4].map((i) => Number((i * nice).toPrecision(6)));
}

/** Powers of ten from below min to at least max (min above 0). */
function decades(min: number, max: number): number[] {
  const low = Math.floor(Math.log10(min));
  const high = Math.max(low + 1, Math.ceil(Math.log10(max)));
  return Array.from({ length: high - low + 1 }, (_, i) => Number((10 ** (low + i)).toPrecision(6)));
}

/** Where a value sits on the y axis, 0 (bottom) to 1 (top), and the axis' ticks. */
function yAxis(chart: Chart): { ticks: number[]; at(y: number): number } {
  const ys = chart.series.flatMap((s) => s.points.map(([, y]) => y));
  if (chart.yScale === 'log') {
    const axis = decades(Math.min(...ys.filter((y) => y > 0)), Math.max(...ys));
    const [low, high] = [Math.log10(axis[0] as number), Math.log10(axis.at(-1) as number)];
    // A value of 0 or less has no place on a log axis: it sits on the bottom line.
    return { ticks: axis, at: (y) => (y > 0 ? (Math.log10(y) - low) / (high - low) : 0) };
  }
  const axis = ticks(Math.max(...ys));
  return { ticks: axis, at: (y) => y / (axis.at(-1) as number) };
}

export function lineChartSvg(chart: Chart): string {
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x));
  const xTicks = ticks(Math.max(...xs));
  const y = yAxis(chart);
  const width = widthOf(chart);
  const plotW = PLOT_WIDTH;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const legendX = MARGIN.left + plotW + 16;
  const px = (x: number) => MARGIN.left + (x / (xTicks.at(-1) as number)) * plotW;
  const py = (value: number) => MARGIN.top + plotH - y.at(value) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="15">${escapeXml(chart.title)}</text>`,
    ...xTicks.map(
      (t) =>
        `<line x1="${px(t)}" x2="${px(t)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#eee"/><text x="${px(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${t}</text>`,
    ),
    ...y.ticks.map(
      (t) =>
        `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${py(t)}" y2="${py(t)}" stroke="#eee"/><text x="${MARGIN.left - 6}" y="${py(t) + 4}" text-anchor="end">${t}</text>`,
    ),
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
    ...chart.series.map((s, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const dash = i >= COLOURS.length ? ' stroke-dasharray="6 4"' : '';
      const path = s.points.map(([x, value], j) => `${j ? 'L' : 'M'}${px(x).toFixed(1)},${py(value).toFixed(1)}`).join(' ');
      const dots = s.points.map(([x, value]) => `<circle cx="${px(x)}" cy="${py(value)}" r="3" fill="${colour}"/>`).join('');
      const legendY = MARGIN.top + 10 + i * 18;
      return `<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>${dots}<line x1="${legendX}" x2="${legendX + 24}" y1="${legendY - 7}" y2="${legendY - 7}" stroke="${colour}" stroke-width="3"${dash}/><text x="${legendX + LEGEND_SWATCH}" y="${legendY - 3}">${escapeXml(s.name)}</text>`;
    }),
    '</svg>',
  ];
  return parts.join('\n');
}

/** Writes the chart as a PNG file (and nothing else). */
export async function writeChartPng(chart: Chart, file: string): Promise<void> {
  requireChromium();
  const browser = await chromium.launch({
    executablePath: CHROMIUM_BINARY,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  try {
    const width = widthOf(chart);
    const page = await browser.newPage({ viewport: { width, height: HEIGHT } });
    await page.setContent(`<html><body style="margin:0">${lineChartSvg(chart)}</body></html>`);
    writeFileSync(file, await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width, height: HEIGHT } }));
  } finally {
    await browser.close();
  }
}
