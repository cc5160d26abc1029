// An agent's key, identity and settings (agent/common/durable-file.ts): replaced whole, with
// their mode, leaving no temporary file; a key is created once, never over an existing one.
// That they outlive a power cycle right after the join is test/e2e/qemu-lifecycle.test.ts
// (the UEFI machine is power cycled right after its agent joined, and its agent comes back).
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileDurably, writeFileDurably } from '../../agent/common/durable-file';

describe("an agent's durable files", () => {
  it('replaces a file whole with its mode, and leaves nothing beside it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-'));
    const file = path.join(dir, 'identity.json');
    writeFileDurably(file, '{"a":1}\n', 0o644);
    writeFileDurably(file, '{"a":2}\n', 0o640);
    expect(readFileSync(file, 'utf8')).toBe('{"a":2}\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir)).toEqual(['identity.json']);
  });

  it('creates a key once: never over an existing file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-'));
    const file = path.join(dir, 'agent.key');
    createFileDurably(file, 'first', 0o600);
    expect(() => createFileDurably(file, 'second', 0o600)).toThrow(/EEXIST/);
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.${process.pid}.tmp`)).toBe(false);
  });
});
