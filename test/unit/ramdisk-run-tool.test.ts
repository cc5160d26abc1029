// A ramdisk tool's failure (agent/ramdisk/run-tool.ts) is a DRIVER_ERROR with what the tool said
// on stderr, and names the command as the caller shows it: a kexec's kernel command line never
// reaches the step's error (and so the workflow's history), though Node's own error names it.
import { describe, expect, it } from 'vitest';
import { runTool } from '../../agent/ramdisk/run-tool';

describe('a ramdisk tool that fails', () => {
  it('says what it said on stderr, and shows the command as asked, never its hidden arguments', async () => {
    const failing = ['-c', 'echo "no such kernel" >&2; exit 3', 'sh', 'root=/dev/vda1 secret=s3cr3t'];
    const hidden = runTool('sh', failing, 'kexec-load', 'kexec -l of the kernel (its command line not shown)');
    await expect(hidden).rejects.toMatchObject({
      code: 'DRIVER_ERROR',
      details: { reason: 'kexec-load' },
      message: 'kexec -l of the kernel (its command line not shown) failed: no such kernel',
    });
    await hidden.catch((error: Error) => expect(JSON.stringify(error)).not.toContain('s3cr3t'));

    await expect(runTool('sh', ['-c', 'exit 4'], 'config-drive-command')).rejects.toMatchObject({ message: 'sh -c exit 4 failed: exit 4' });
    expect(await runTool('sh', ['-c', 'echo fine'], 'unused')).toBe('fine\n');
  });
});
