// What a real machine's agents (the ramdisk, the installed OS's node agent) see of it, read from the kernel: DMI (/sys/class/dmi/id),
// NICs (/sys/class/net), disks (/sys/block), CPUs and memory (/proc), GPUs (PCI display
// class 0x03 in /sys/bus/pci/devices). `root` is '/' on a machine; tests hand in a directory
// laid out the same way. Every read is bounded: sysfs files are small, but a missing or odd
// one must never stop a boot, so an unreadable fact is null or left out.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { normalizeMac } from '../../core/mac';

const MAX_FACT_BYTES = 4096;
const MAX_DEVICES = 256;
const SECTOR_BYTES = 512;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface SysfsFacts {
  system: { productUuid: string | null; vendor: string; model: string; serial: string; arch: string; uefi: boolean; cpus: number; memoryBytes: number };
  nics: Array<{ mac: string; driver: string | null; speedMbps: number | null; link: boolean }>;
  disks: Array<{ name: string; path: string; sizeBytes: number; model: string | null; serial: string | null; rotational: boolean }>;
  gpus: Array<{ model: string; uuid: string }>;
}

function readFact(file: string): string | null {
  try {
    const text = readFileSync(file, { encoding: 'utf8', flag: 'r' }).slice(0, MAX_FACT_BYTES);
    const trimmed = text.replace(/\0/g, '').trim();
    return trimmed === '' ? null : trimmed;
  } catch {
    return null;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort().slice(0, MAX_DEVICES);
  } catch {
    return [];
  }
}

function numberFact(file: string): number | null {
  const text = readFact(file);
  if (text === null || !/^-?\d+$/.test(text)) return null;
  return Number(text);
}

function systemFacts(root: string): SysfsFacts['system'] {
  const dmi = (name: string) => readFact(path.join(root, 'sys/class/dmi/id', name));
  const uuid = dmi('product_uuid')?.toLowerCase() ?? null;
  const cpus = (readFileSafe(path.join(root, 'proc/cpuinfo')).match(/^processor\s*:/gm) ?? []).length;
  const memKb = /^MemTotal:\s+(\d+) kB/m.exec(readFileSafe(path.join(root, 'proc/meminfo')))?.[1];
  return {
    productUuid: uuid && uuidPattern.test(uuid) ? uuid : null,
    vendor: dmi('sys_vendor') ?? 'unknown',
    model: dmi('product_name') ?? 'unknown',
    serial: dmi('product_serial') ?? 'unknown',
    arch: process.arch === 'arm64' ? 'aarch64' : 'x86_64',
    uefi: list(path.join(root, 'sys/firmware/efi')).length > 0,
    cpus,
    memoryBytes: memKb ? Number(memKb) * 1024 : 0,
  };
}

/** /proc files report a size of 0, so they are read whole, with a bound. */
function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(0, 1 << 20);
  } catch {
    return '';
  }
}

function nicFacts(root: string): SysfsFacts['nics'] {
  const netDir = path.join(root, 'sys/class/net');
  return list(netDir).flatMap((name) => {
    const dir = path.join(netDir, name);
    // Physical NICs have a device link; lo, bridges and virtual links do not.
    if (readLinkSafe(path.join(dir, 'device')) === null) return [];
    const mac = normalizeMac(readFact(path.join(dir, 'address')) ?? '');
    if (!mac) return [];
    const driverLink = readLinkSafe(path.join(dir, 'device/driver'));
    const speed = numberFact(path.join(dir, 'speed'));
    return [
      {
        mac,
        driver: driverLink ? path.basename(driverLink) : null,
        speedMbps: speed !== null && speed > 0 ? speed : null,
        link: readFact(path.join(dir, 'carrier')) === '1',
      },
    ];
  });
}

function readLinkSafe(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

/** Whole disks only: no loop, ram, zram, device-mapper or removable devices, no partitions. */
function diskFacts(root: string): SysfsFacts['disks'] {
  const blockDir = path.join(root, 'sys/block');
  return list(blockDir).flatMap((name) => {
    if (/^(loop|ram|zram|dm-|sr|fd|md)/.test(name)) return [];
    const dir = path.join(blockDir, name);
    if (readFact(path.join(dir, 'removable')) === '1') return [];
    const sectors = numberFact(path.join(dir, 'size'));
    if (sectors === null || sectors <= 0) return [];
    return [
      {
        name,
        path: path.join('/dev', name),
        sizeBytes: sectors * SECTOR_BYTES,
        model: readFact(path.join(dir, 'device/model')),
        serial: readFact(path.join(dir, 'device/serial')) ?? readFact(path.join(dir, 'serial')),
        rotational: readFact(path.join(dir, 'queue/rotational')) === '1',
      },
    ];
  });
}

/**
 * Compute GPUs: 3D controllers (PCI class 0x0302), and display controllers (0x03xx) of the GPU
 * vendors (NVIDIA, AMD, Intel). A server's BMC graphics (ASPEED, Matrox) and an emulator's VGA
 * are display controllers too, and are not GPUs. The model is the vendor:device id pair.
 */
const GPU_VENDORS = new Set(['10de', '1002', '8086']);

function gpuFacts(root: string): SysfsFacts['gpus'] {
  const pciDir = path.join(root, 'sys/bus/pci/devices');
  return list(pciDir).flatMap((address) => {
    const dir = path.join(pciDir, address);
    const pciClass = readFact(path.join(dir, 'class'));
    if (!pciClass || !/^0x03/.test(pciClass)) return [];
    const vendor = readFact(path.join(dir, 'vendor'))?.replace(/^0x/, '') ?? '????';
    const device = readFact(path.join(dir, 'device'))?.replace(/^0x/, '') ?? '????';
    if (!pciClass.startsWith('0x0302') && !GPU_VENDORS.has(vendor)) return [];
    return [{ model: `pci ${vendor}:${device}`, uuid: `pci-${address}` }];
  });
}

export function readSysfsFacts(root = '/'): SysfsFacts {
  return { system: systemFacts(root), nics: nicFacts(root), disks: diskFacts(root), gpus: gpuFacts(root) };
}
