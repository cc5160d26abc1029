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
  series: Series[];
}

const WIDTH = 720;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 160, top: 40, bottom: 50 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Five round ticks from 0 to at least max. */
function ticks(max: number): number[] {
  const step = 10 ** Math.floor(Math.log10(Math.max(max, 1e-9) / 4));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => s * 4 >= max) ?? step * 10;
  return [0, 1, 2, 3, 4].map((i) => Number((i * nice).toPrecision(6)));
}

export function lineChartSvg(chart: Chart): string {
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x));
  const ys = chart.series.flatMap((s) => s.points.map(([, y]) => y));
  const xTicks = ticks(Math.max(...xs));
  const yTicks = ticks(Math.max(...ys));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = (x: number) => MARGIN.left + (x / (xTicks.at(-1) as number)) * plotW;
  const py = (y: number) => MARGIN.top + plotH - (y / (yTicks.at(-1) as number)) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="15">${escapeXml(chart.title)}</text>`,
    ...xTicks.map(
      (t) =>
        `<line x1="${px(t)}" x2="${px(t)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#eee"/><text x="${px(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${t}</text>`,
    ),
    ...yTicks.map(
      (t) =>
        `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${py(t)}" y2="${py(t)}" stroke="#eee"/><text x="${MARGIN.left - 6}" y="${py(t) + 4}" text-anchor="end">${t}</text>`,
    ),
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(chart.yLabel)}</text>`,
    ...chart.series.map((s, i) => {
      const colour = COLOURS[i % COLOURS.length];
      const path = s.points.map(([x, y], j) => `${j ? 'L' : 'M'}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
      const dots = s.points.map(([x, y]) => `<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${colour}"/>`).join('');
      const legendY = MARGIN.top + 10 + i * 18;
      return `<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>${dots}<rect x="${WIDTH - MARGIN.right + 16}" y="${legendY - 8}" width="12" height="3" fill="${colour}"/><text x="${WIDTH - MARGIN.right + 34}" y="${legendY - 3}">${escapeXml(s.name)}</text>`;
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
    const page = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT } });
    await page.setContent(`<html><body style="margin:0">${lineChartSvg(chart)}</body></html>`);
    writeFileSync(file, await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width: WIDTH, height: HEIGHT } }));
  } finally {
    await browser.close();
  }
}
