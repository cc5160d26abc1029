// A real machine's hardware facts (the ramdisk's and the installed OS's), read from a sysfs/proc tree laid out as the
// kernel lays it out (a directory the test makes: the hardware is emulated, the reader is real).
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { readSysfsFacts } from '../../agent/common/sysfs-facts';

function tree(files: Record<string, string>, links: Record<string, string> = {}): string {
  const root = mkdtempSync(path.join(inject('runDir'), 'sysfs-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  for (const [link, target] of Object.entries(links)) {
    mkdirSync(path.dirname(path.join(root, link)), { recursive: true });
    symlinkSync(target, path.join(root, link));
  }
  return root;
}

describe('sysfs hardware facts', () => {
  const root = tree(
    {
      'sys/class/dmi/id/product_uuid': '4C4C4544-0042-3510-8052-B4C04F4E3732\n',
      'sys/class/dmi/id/sys_vendor': 'QEMU\n',
      'sys/class/dmi/id/product_name': 'Standard PC (i440FX + PIIX, 1996)\n',
      'sys/class/net/eth0/address': '52:54:00:AA:BB:01\n',
      'sys/class/net/eth0/speed': '1000\n',
      'sys/class/net/eth0/carrier': '1\n',
      'sys/class/net/lo/address': '00:00:00:00:00:00\n',
      'sys/block/vda/size': '2097152\n',
      'sys/block/vda/removable': '0\n',
      'sys/block/vda/queue/rotational': '0\n',
      'sys/block/vda/serial': 'disk-1\n',
      'sys/block/loop0/size': '1000\n',
      'sys/block/sdb/size': '1000\n',
      'sys/block/sdb/removable': '1\n',
      'sys/block/sdc/size': '0\n',
      'sys/bus/pci/devices/0000:00:02.0/class': '0x030000\n',
      'sys/bus/pci/devices/0000:00:02.0/vendor': '0x1a03\n',
      'sys/bus/pci/devices/0000:00:02.0/device': '0x2000\n',
      'sys/bus/pci/devices/0000:3b:00.0/class': '0x030200\n',
      'sys/bus/pci/devices/0000:3b:00.0/vendor': '0x10de\n',
      'sys/bus/pci/devices/0000:3b:00.0/device': '0x20b0\n',
      'sys/bus/pci/devices/0000:5e:00.0/class': '0x030000\n',
      'sys/bus/pci/devices/0000:5e:00.0/vendor': '0x1002\n',
      'sys/bus/pci/devices/0000:5e:00.0/device': '0x740f\n',
      'sys/bus/pci/devices/0000:00:03.0/class': '0x020000\n',
      'proc/cpuinfo': 'processor\t: 0\nmodel name\t: x\n\nprocessor\t: 1\nmodel name\t: x\n',
      'proc/meminfo': 'MemTotal:        1014396 kB\nMemFree: 1 kB\n',
      'sys/firmware/efi/systab': 'x',
      'sys/devices/pci0000:00/0000:00:03.0/vendor': '0x1af4\n',
    },
    {
      'sys/class/net/eth0/device': '../../../devices/pci0000:00/0000:00:03.0',
      'sys/devices/pci0000:00/0000:00:03.0/driver': '../../../bus/pci/drivers/virtio-pci',
    },
  );

  it('reads the DMI identity, CPUs, memory and firmware kind', () => {
    const { system } = readSysfsFacts(root);
    expect(system).toMatchObject({
      productUuid: '4c4c4544-0042-3510-8052-b4c04f4e3732',
      vendor: 'QEMU',
      model: 'Standard PC (i440FX + PIIX, 1996)',
      serial: 'unknown',
      cpus: 2,
      memoryBytes: 1014396 * 1024,
      uefi: true,
    });
  });

  it('lists physical NICs by MAC (not lo) and whole, fixed, non-empty disks only', () => {
    const facts = readSysfsFacts(root);
    expect(facts.nics.map((n) => ({ mac: n.mac, driver: n.driver, speed: n.speedMbps, link: n.link }))).toEqual([
      { mac: '52:54:00:aa:bb:01', driver: 'virtio-pci', speed: 1000, link: true },
    ]);
    expect(facts.disks).toEqual([{ name: 'vda', path: '/dev/vda', sizeBytes: 2097152 * 512, model: null, serial: 'disk-1', rotational: false }]);
  });

  it('finds GPUs (3D controllers, display controllers of GPU vendors), not the BMC VGA', () => {
    expect(readSysfsFacts(root).gpus).toEqual([
      { model: 'pci 10de:20b0', uuid: 'pci-0000:3b:00.0' },
      { model: 'pci 1002:740f', uuid: 'pci-0000:5e:00.0' },
    ]);
  });

  it('takes a malformed product UUID as unknown and an empty tree as no hardware', () => {
    const odd = tree({ 'sys/class/dmi/id/product_uuid': 'not-a-uuid\n' });
    expect(readSysfsFacts(odd).system.productUuid).toBeNull();
    expect(readSysfsFacts(odd)).toMatchObject({ nics: [], disks: [], gpus: [], system: { cpus: 0, memoryBytes: 0, uefi: false } });
  });
});
