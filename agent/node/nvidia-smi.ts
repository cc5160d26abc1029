// The host's nvidia-smi, found on its PATH inside the root the agent manages (a real host's
// driver utilities, or the tool an emulated machine's OS carries): the GPUs it sees
// (`--query-gpu`) and a GPU reset (`--gpu-reset -i N`). Bounded in time and output; absent
// means the host has no NVIDIA driver utilities.
import { IronflowError } from '../../core/errors';
import type { HostRoot } from './host-root';

const QUERY_TIMEOUT_MS = 30_000;
const RESET_TIMEOUT_MS = 120_000;
const MAX_GPUS = 64;

interface NvidiaGpu {
  index: number;
  /** The PCI address as sysfs names it (0000:3b:00.0). */
  pciAddress: string;
  uuid: string;
  name: string;
}

/** nvidia-smi's 00000000:3B:00.0 as sysfs's 0000:3b:00.0. */
const sysfsPciAddress = (busId: string): string =>
  busId
    .trim()
    .toLowerCase()
    .replace(/^0{4}(?=[0-9a-f]{4}:)/, '');

export async function queryNvidiaGpus(root: HostRoot): Promise<NvidiaGpu[] | undefined> {
  const tool = root.findTool('nvidia-smi');
  if (!tool) return undefined;
  const result = await root.run(tool, ['--query-gpu=index,pci.bus_id,uuid,name', '--format=csv,noheader'], QUERY_TIMEOUT_MS);
  if (!result.ok) return [];
  return result.stdout
    .split('\n')
    .slice(0, MAX_GPUS)
    .flatMap((line) => {
      const [index, busId, uuid, ...name] = line.split(',').map((field) => field.trim());
      if (!index || !/^\d+$/.test(index) || !busId || !uuid) return [];
      return [{ index: Number(index), pciAddress: sysfsPciAddress(busId), uuid: uuid.slice(0, 128), name: name.join(',').slice(0, 256) }];
    });
}

/** Resets every GPU nvidia-smi sees, one by one; UNSUPPORTED naming the host where it has no nvidia-smi. */
export async function resetGpus(root: HostRoot, hostname: string): Promise<{ tool: string; reset: Array<{ index: number; uuid: string }> }> {
  const tool = root.findTool('nvidia-smi');
  if (!tool)
    throw new IronflowError('UNSUPPORTED', `gpu.reset: ${hostname} has no nvidia-smi on its PATH (no NVIDIA driver utilities, or no NVIDIA GPU)`, {
      reason: 'no-nvidia-smi',
      host: hostname,
    });
  const gpus = (await queryNvidiaGpus(root)) ?? [];
  if (gpus.length === 0) throw new IronflowError('UNSUPPORTED', `gpu.reset: nvidia-smi on ${hostname} lists no GPU`, { reason: 'no-gpus', host: hostname });
  const reset: Array<{ index: number; uuid: string }> = [];
  for (const gpu of gpus) {
    const result = await root.run(tool, ['--gpu-reset', '-i', String(gpu.index)], RESET_TIMEOUT_MS);
    if (!result.ok)
      throw new IronflowError('DRIVER_ERROR', `gpu.reset: GPU ${gpu.index} (${gpu.uuid}) on ${hostname}: ${result.error}`, {
        reason: 'gpu-reset-failed',
        host: hostname,
        index: gpu.index,
      });
    reset.push({ index: gpu.index, uuid: gpu.uuid });
  }
  return { tool, reset };
}
