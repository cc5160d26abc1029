#!/usr/bin/env bash
# Installs the real peers the tests start or check against, skipping what is there:
#   ipmitool + ipmi_sim (Debian: ipmitool, openipmi)   — test/integration/bmc-ipmi.test.ts
#   sushy-emulator + bcrypt (PyPI: sushy-tools)          — test/integration/bmc-redfish-sushy.test.ts, bmc-virtual-media.test.ts
#   cloud-init, ignition-validate (Debian: cloud-init, ignition) — test/unit/userdata.test.ts
#   qemu-system-x86, ipxe-qemu, ovmf, ipxe, dnsmasq-base, linux-image-amd64, busybox-static
#     (Debian)                                           — test/e2e/boot-real-firmware.test.ts
#   dnsmasq-base also for bench/proxy-dhcp.ts        — the peer proxy DHCP is measured against
#   ipxe, curl (Debian)                                — test/integration/tftp.test.ts, boot-files.test.ts
#   tftpd-hpa, nginx-light (Debian)                    — bench/tftp.ts, bench/boot-files-http.ts: the peers measured against
#   cpio, zstd, binutils, dosfstools, mtools, e2fsprogs, nvme-cli, hdparm, kexec-tools, fdisk, syslinux,
#   syslinux-common, systemd-boot-efi
#     (Debian)                                           — test/e2e/qemu-lifecycle.test.ts: npm run build:ramdisk and
#                                                          build:os-image, and reading the deployed disk's config drive
#   chromium (Debian)                                  — test/e2e/console.test.ts (driven by playwright-core; test/helpers/browser.ts)
#   the Temporal server and its SQL tool (Go module proxy; scripts/temporal-cluster-deps.sh), only with
#     IRONFLOW_E2E_CLUSTER=1                           — test/e2e/cluster-lifecycle.test.ts (CI's PostgreSQL pass)
# Idempotent. Prints what it did; on failure exits non-zero with the command to retry.
set -euo pipefail
say() { printf 'test-deps: %s\n' "$*" >&2; }
fail() { say "FAILED: $1"; say "retry with: $2"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && SUDO="sudo" || true
fi

# 1. ipmitool and ipmi_sim from Debian/Ubuntu packages.
missing_apt=()
command -v ipmitool >/dev/null || missing_apt+=(ipmitool)
command -v ipmi_sim >/dev/null || missing_apt+=(openipmi)
command -v cloud-init >/dev/null || missing_apt+=(cloud-init)
command -v ignition-validate >/dev/null || missing_apt+=(ignition)
# Real firmware booting from the site agent: QEMU (SeaBIOS and its iPXE ROMs, OVMF), iPXE
# builds served over TFTP, a DHCP server that gives addresses only, a kernel (found by glob:
# /boot/vmlinuz-*-amd64) and a static busybox for the test's initrd.
command -v qemu-system-x86_64 >/dev/null || missing_apt+=(qemu-system-x86)
[ -f /usr/lib/ipxe/qemu/efi-virtio.rom ] || missing_apt+=(ipxe-qemu)
[ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] || missing_apt+=(ovmf)
[ -f /usr/lib/ipxe/snponly.efi ] || missing_apt+=(ipxe)
[ -x /usr/sbin/dnsmasq ] || missing_apt+=(dnsmasq-base)
# The boot server's TFTP and /boot/files: curl is the client of the tests and benches;
# tftpd-hpa and nginx are the peers the benches measure against.
command -v curl >/dev/null || missing_apt+=(curl)
[ -x /usr/sbin/in.tftpd ] || missing_apt+=(tftpd-hpa)
[ -x /usr/sbin/nginx ] || missing_apt+=(nginx-light)
compgen -G '/boot/vmlinuz-*-amd64' >/dev/null || missing_apt+=(linux-image-amd64)
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing_apt+=(busybox-static)
# The real ramdisk and OS images (scripts/build-ramdisk.mjs, scripts/build-os-image.mjs): the
# initramfs packing, stripping Node, the tools the ramdisk carries (config drive, device
# erase, kexec), and the OS images' partition tables and boot loaders (syslinux for BIOS,
# systemd-boot for UEFI); mtools also reads the deployed disk's config drive in the QEMU
# lifecycle test.
command -v cpio >/dev/null || missing_apt+=(cpio)
command -v zstd >/dev/null || missing_apt+=(zstd)
command -v strip >/dev/null || missing_apt+=(binutils)
command -v mkfs.vfat >/dev/null || missing_apt+=(dosfstools)
command -v mcopy >/dev/null || missing_apt+=(mtools)
command -v nvme >/dev/null || missing_apt+=(nvme-cli)
command -v hdparm >/dev/null || missing_apt+=(hdparm)
command -v kexec >/dev/null || missing_apt+=(kexec-tools)
[ -x /usr/sbin/debugfs ] && [ -x /usr/sbin/mkfs.ext4 ] || missing_apt+=(e2fsprogs)
command -v sfdisk >/dev/null || missing_apt+=(fdisk)
command -v syslinux >/dev/null || missing_apt+=(syslinux)
[ -f /usr/lib/syslinux/mbr/mbr.bin ] || missing_apt+=(syslinux-common)
[ -f /usr/lib/systemd/boot/efi/systemd-bootx64.efi ] || missing_apt+=(systemd-boot-efi)
# Browser tests (the console, the Temporal Web UI): playwright-core drives Debian's chromium.
[ -x /usr/bin/chromium ] || missing_apt+=(chromium)
if [ "${#missing_apt[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null || fail "apt-get not found; install ${missing_apt[*]} with your package manager" "install ${missing_apt[*]}, then bash scripts/test-deps.sh"
  say "installing ${missing_apt[*]} (apt-get)…"
  # kexec-tools would otherwise make this machine's own reboots kexec (LOAD_KEXEC=true): the ramdisk only needs the binary.
  if [[ " ${missing_apt[*]} " == *" kexec-tools "* ]]; then
    echo 'kexec-tools kexec-tools/load_kexec boolean false' | $SUDO debconf-set-selections
  fi
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_apt[@]}"; } >&2 \
    || fail "apt-get install ${missing_apt[*]}" "$SUDO apt-get update && $SUDO apt-get install -y ${missing_apt[*]}"
  say "installed ${missing_apt[*]}"
else
  say "ipmitool, ipmi_sim, cloud-init, ignition-validate, QEMU (SeaBIOS, OVMF, iPXE), dnsmasq, a kernel, busybox-static, curl, tftpd-hpa, nginx, the boot image tools (syslinux, systemd-boot) and chromium present"
fi

# 2. sushy-tools (brings bcrypt, which the tests use for its htpasswd) from PyPI.
PYTHON=$(command -v python3 || true)
[ -n "$PYTHON" ] || fail "python3 not found (sushy-tools needs Python 3.9+)" "install python3 and pip, then bash scripts/test-deps.sh"
if ! command -v sushy-emulator >/dev/null || ! "$PYTHON" -c 'import sushy_tools, bcrypt' 2>/dev/null; then
  say "installing sushy-tools (pip)…"
  pip_args=(install --quiet "sushy-tools==2.2.0")
  # Debian's Python refuses system-wide pip installs unless told (PEP 668).
  if "$PYTHON" -m pip install --help 2>/dev/null | grep -q -- '--break-system-packages' && [ -z "${VIRTUAL_ENV:-}" ] \
     && "$PYTHON" -c 'import sys,sysconfig,os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"),"EXTERNALLY-MANAGED")) else 1)'; then
    pip_args+=(--break-system-packages)
  fi
  "$PYTHON" -m pip "${pip_args[@]}" >&2 || fail "pip install sushy-tools" "$PYTHON -m pip ${pip_args[*]}"
  command -v sushy-emulator >/dev/null || fail "sushy-emulator is not on PATH after pip install (pip's script dir missing from PATH?)" "export PATH=\"\$($PYTHON -m site --user-base)/bin:\$PATH\" && bash scripts/test-deps.sh"
  say "installed sushy-tools $("$PYTHON" -m pip show sushy-tools 2>/dev/null | sed -n 's/^Version: //p')"
else
  say "sushy-tools present"
fi

# 3. The real Temporal server, for the one test that runs on it: a build of minutes, so only when asked.
if [ "${IRONFLOW_E2E_CLUSTER:-0}" = 1 ]; then
  bash "$(dirname "$0")/temporal-cluster-deps.sh" || fail "building the Temporal server" "bash scripts/temporal-cluster-deps.sh"
fi

command -v openssl >/dev/null || fail "openssl not found (TLS tests make a throwaway CA with it)" "$SUDO apt-get install -y openssl"
say "ready"
