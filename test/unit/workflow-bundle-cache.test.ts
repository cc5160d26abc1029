// The workflow bundle kept between starts (worker/workflow-bundle-cache.ts): used only while
// every module it was built from holds the same content and its key is the same; rebuilt and
// replaced otherwise.
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { bundleInputs, cachedWorkflowBundle, projectDigest } from '../../worker/workflow-bundle-cache';
import { workflowsPath } from '../../worker/workflow-bundle';

/** A bundle as webpack writes one in development mode: each module opens with its path. */
function fakeBundle(modules: string[], context: string): string {
  return `var __TEMPORAL__;\n${modules.map((m) => `/***/ "./${path.relative(context, m)}"\n(() => {})\n`).join('')}/***/ "?1a2b"\n`;
}

describe('the kept workflow bundle', () => {
  it('lists the files a real bundle was built from, every one readable', () => {
    const code = readFileSync(inject('workflowBundle'), 'utf8');
    const files = bundleInputs(code, process.cwd());
    expect(files).not.toBeNull();
    expect(Object.keys(files ?? {})).toContain(workflowsPath);
    expect(Object.keys(files ?? {}).length).toBeGreaterThan(100);
  });

  it('is used while its modules and key are unchanged, and built again when either changes', async () => {
    const dir = mkdtempSync(path.join(inject('runDir'), 'bundle-cache-'));
    const source = path.join(dir, 'workflow.ts');
    writeFileSync(source, 'export const a = 1;');
    const cacheDir = path.join(dir, 'cache');
    let builds = 0;
    const build = async () => {
      builds += 1;
      return { code: `${fakeBundle([source], process.cwd())}// build ${builds}\n` };
    };

    const first = await cachedWorkflowBundle(cacheDir, 'key-1', build);
    expect(first.kept).toBe(false);
    expect((statSync(cacheDir).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(path.join(cacheDir, 'workflow-bundle.js')).mode & 0o777).toString(8)).toBe('600');

    const again = await cachedWorkflowBundle(cacheDir, 'key-1', build);
    expect(again).toEqual({ code: first.code, kept: true });
    expect(builds).toBe(1);

    writeFileSync(source, 'export const a = 2;');
    const afterEdit = await cachedWorkflowBundle(cacheDir, 'key-1', build);
    expect(afterEdit.kept).toBe(false);
    expect(afterEdit.code).toContain('// build 2');
    expect((await cachedWorkflowBundle(cacheDir, 'key-1', build)).kept).toBe(true);

    expect((await cachedWorkflowBundle(cacheDir, 'key-2', build)).kept).toBe(false);
    expect(builds).toBe(3);

    // A bundle file that is not the one its manifest describes is never used.
    writeFileSync(path.join(cacheDir, 'workflow-bundle.js'), 'tampered');
    const afterTamper = await cachedWorkflowBundle(cacheDir, 'key-2', build);
    expect(afterTamper.kept).toBe(false);
    expect(afterTamper.code).toContain('// build 4');
  });

  it('keeps nothing when a module is no readable file, and still hands the bundle over', async () => {
    const dir = mkdtempSync(path.join(inject('runDir'), 'bundle-cache-'));
    const code = fakeBundle([path.join(dir, 'gone.ts')], process.cwd());
    expect(bundleInputs(code, process.cwd())).toBeNull();
    const cacheDir = path.join(dir, 'cache');
    expect(await cachedWorkflowBundle(cacheDir, 'k', async () => ({ code }))).toEqual({ code, kept: false });
    expect(await cachedWorkflowBundle(cacheDir, 'k', async () => ({ code: 'second' }))).toEqual({ code: 'second', kept: false });
  });

  it("changes its key's project digest when a file is added or the lockfile changes, not for the data dir or node_modules", () => {
    const root = mkdtempSync(path.join(inject('runDir'), 'bundle-project-'));
    mkdirSync(path.join(root, 'core/x'), { recursive: true });
    writeFileSync(path.join(root, 'core/x/index.ts'), 'export const x = 1;');
    writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3}');
    const before = projectDigest(root);

    mkdirSync(path.join(root, '.ironflow/cache'), { recursive: true });
    writeFileSync(path.join(root, '.ironflow/cache/workflow-bundle.js'), 'kept');
    mkdirSync(path.join(root, 'node_modules/p'), { recursive: true });
    writeFileSync(path.join(root, 'node_modules/p/index.js'), '');
    expect(projectDigest(root)).toBe(before);

    // An import of './x' would now resolve to core/x.ts, whose content no kept bundle holds.
    writeFileSync(path.join(root, 'core/x.ts'), 'export const x = 2;');
    const added = projectDigest(root);
    expect(added).not.toBe(before);

    writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}');
    expect(projectDigest(root)).not.toBe(added);
  });
});
