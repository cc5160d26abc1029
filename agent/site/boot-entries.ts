// Boot entries in data_dir/boot-entries.json, so a restart keeps them: written by
// boot.prepareRamdisk, dropped by boot.cleanUp or when they lapse. The boot server (proxy
// DHCP, TFTP, /boot/ipxe) reads them; it extends an entry with what it needs.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface BootEntry {
  nodeId: string;
  workflowId: string;
  stepKey: string;
  createdAt: string;
  notAfter: string;
}

export class BootEntryStore {
  private readonly file: string;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'boot-entries.json');
  }

  list(now = Date.now()): BootEntry[] {
    if (!existsSync(this.file)) return [];
    const entries = JSON.parse(readFileSync(this.file, 'utf8')) as BootEntry[];
    return entries.filter((e) => Date.parse(e.notAfter) > now);
  }

  /** Adds or replaces the entry of (nodeId, workflowId): a retried step writes the same entry. */
  put(entry: BootEntry): void {
    this.write([...this.list().filter((e) => !(e.nodeId === entry.nodeId && e.workflowId === entry.workflowId)), entry]);
  }

  /** Drops a workflow's entries; answers how many. */
  removeWorkflow(workflowId: string): number {
    const entries = this.list();
    const kept = entries.filter((e) => e.workflowId !== workflowId);
    this.write(kept);
    return entries.length - kept.length;
  }

  private write(entries: BootEntry[]): void {
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}
