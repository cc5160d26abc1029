// The CLI's progress output: a bar redrawn in place on a terminal, one line per change elsewhere.
import { describe, expect, it } from 'vitest';
import { createProgress, progressBar } from '../../cli/progress';

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe('cli progress', () => {
  it('draws a bar of 30 cells with the share done', () => {
    expect(progressBar(0, 10_000)).toBe(`[${'.'.repeat(30)}]   0%`);
    expect(progressBar(5_000, 10_000)).toBe(`[${'#'.repeat(15)}${'.'.repeat(15)}]  50%`);
    expect(progressBar(10_000, 10_000)).toBe(`[${'#'.repeat(30)}] 100%`);
    expect(progressBar(0, 0)).toBe(`[${'#'.repeat(30)}] 100%`);
  });

  it('on a terminal, redraws one line in place and ends it with a newline', () => {
    const out = stream(true);
    const progress = createProgress(out);
    progress.update(100, 200, 'running');
    progress.update(100, 200, 'running'); // unchanged: not redrawn
    progress.update(200, 200, 'finished');
    progress.end();
    expect(out.writes).toEqual([`\r\x1b[2K${progressBar(100, 200)} 100/200 running`, `\r\x1b[2K${progressBar(200, 200)} 200/200 finished`, '\n']);
  });

  it('off a terminal, writes one timestamped line per change and no control characters', () => {
    const out = stream(false);
    const progress = createProgress(out);
    progress.update(1, 2, 'running');
    progress.update(1, 2, 'running');
    progress.update(2, 2, 'finished');
    progress.end();
    expect(out.writes).toHaveLength(2);
    for (const line of out.writes) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+Z {2}\[[#.]{30}\] +\d+% \d\/2 (running|finished)\n$/);
    expect(out.writes.join('')).not.toMatch(/[\r\x1b]/);
  });

  it('off a terminal, writes at most one line a second, the finished one at once, and the held-back last state at the end', () => {
    const out = stream(false);
    let clock = 0;
    const progress = createProgress(out, { now: () => clock });
    progress.update(0, 100, 'starting');
    for (let done = 1; done < 50; done++) progress.update(done, 100, 'starting'); // within the same second: held back
    clock = 1000;
    progress.update(50, 100, 'starting'); // a second later: written
    progress.update(60, 100, 'starting');
    progress.end(); // the last state, held back, is written
    expect(out.writes.map((line) => line.slice(line.indexOf('  ') + 2))).toEqual([
      `${progressBar(0, 100)} 0/100 starting\n`,
      `${progressBar(50, 100)} 50/100 starting\n`,
      `${progressBar(60, 100)} 60/100 starting\n`,
    ]);
    const finished = stream(false);
    const quick = createProgress(finished, { now: () => 0 });
    quick.update(1, 2, 'running');
    quick.update(2, 2, 'finished');
    quick.end();
    expect(finished.writes).toHaveLength(2);
  });
});
