// V8's allocation-site pretenuring, turned off for the control plane's process. Under a steady
// load of reads V8 saw the rows of one page survive a scavenge (the page's requests were still
// in flight), marked the sites that build them (the driver's row arrays and strings, the mapped
// rows) as long-lived, and from then on allocated every row straight in the old generation:
// 18 MB/s of garbage there at 500 pages a second, a major collection every 15-20 s and a pause
// of 60-90 ms each time, which put 100-130 ms on the p99 of a page of nodes. Without it the old
// generation grows 1.2 MB/s and the p99 stays 7-15 ms (bench/README.md, "The API").
import { setFlagsFromString } from 'node:v8';

/** Sets the collector's flags: once, at the start of a process, before it takes load. */
export function tuneGarbageCollector(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
