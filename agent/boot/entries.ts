// The site agent's boot entries, keyed by MAC, in data_dir/boot-entries.json so a restart
// keeps answering. Written by boot.prepareRamdisk, dropped by boot.cleanUp (a workflow's
// entries) or when they lapse (notAfter). Writes go through a temp file and a rename.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { bootEntrySchema, type BootEntry } from '../../core/boot/boot-entry';

const fileSchema = z.object({ version: z.literal(1), entries: z.array(bootEntrySchema) });

export class BootEntryStore {
  readonly file: string;
  private entries = new Map<string, BootEntry>();

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'boot-entries.json');
    this.load();
  }

  /** The live entry of a MAC (normalized, lower case), or undefined. Drops it when lapsed. */
  get(mac: string, now = Date.now()): BootEntry | undefined {
    const entry = this.entries.get(mac);
    if (entry && Date.parse(entry.notAfter) <= now) {
      this.dropLapsed(now);
      return undefined;
    }
    return entry;
  }

  list(now = Date.now()): BootEntry[] {
    this.dropLapsed(now);
    return [...this.entries.values()];
  }

  /** Adds or replaces entries by MAC: a retried step writes the same entries again. */
  put(entries: BootEntry[]): void {
    for (const entry of entries) this.entries.set(entry.mac, entry);
    this.save();
  }

  /** Drops a workflow's entries (or only the listed MACs of it); answers the dropped entries. */
  removeWorkflow(workflowId: string, macs?: string[]): BootEntry[] {
    const removed = [...this.entries.values()].filter((e) => e.workflowId === workflowId && (!macs || macs.includes(e.mac)));
    for (const entry of removed) this.entries.delete(entry.mac);
    if (removed.length > 0) this.save();
    return removed;
  }

  private dropLapsed(now: number): void {
    let dropped = false;
    for (const [mac, entry] of this.entries) {
      if (Date.parse(entry.notAfter) <= now) {
        this.entries.delete(mac);
        dropped = true;
      }
    }
    if (dropped) this.save();
  }

  private load(): void {
    if (!existsSync(this.file)) return;
    const parsed = fileSchema.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
    // An unreadable file is kept aside, not silently overwritten: boot entries expire anyway.
    if (!parsed.success) {
      renameSync(this.file, `${this.file}.unreadable-${Date.now()}`);
      return;
    }
    for (const entry of parsed.data.entries) this.entries.set(entry.mac, entry);
    this.dropLapsed(Date.now());
  }

  private save(): void {
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ version: 1, entries: [...this.entries.values()] }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}
