// GET and HEAD /boot/files/<name>: the ramdisk's kernel and initrd (files_dir), then the iPXE
// builds (tftp_root) for UEFI HTTP boot. <name> is one path segment of safe characters, and
// the file must really be inside its directory (jail.ts: symlinks resolved). Ranges, HEAD and
// the bound on transfers at once are ranged-file.ts's.
import { openInside, type JailedFile } from '../jail';
import { sendRangedFile, TransferSlots } from './ranged-file';
import { sendText, type BootHttpRoute } from './server';

const PREFIX = '/boot/files/';
const MAX_DOWNLOADS = 64;

function decodedSegment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null; // a malformed %-escape
  }
}

function etagOf(file: JailedFile): string {
  return `"${file.ino.toString(16)}-${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}"`;
}

export function filesRoute(dirs: { filesDir: string; tftpRoot: string }, maxDownloads = MAX_DOWNLOADS): BootHttpRoute {
  const slots = new TransferSlots(maxDownloads);

  async function openByName(name: string): Promise<JailedFile | null> {
    for (const dir of [dirs.filesDir, dirs.tftpRoot]) {
      const opened = await openInside(dir, name);
      if (opened.ok) return opened.file;
    }
    return null;
  }

  return {
    path: PREFIX,
    handle: (req, res, url) =>
      slots.run(res, async () => {
        const name = decodedSegment(url.pathname.slice(PREFIX.length));
        const file = name === null ? null : await openByName(name);
        if (!file) return sendText(res, 404, 'not found\n');
        try {
          await sendRangedFile(req, res, {
            source: { handle: file.handle },
            size: file.size,
            etag: etagOf(file),
            lastModified: new Date(file.mtimeMs).toUTCString(),
            cacheControl: 'no-cache',
          });
        } finally {
          await file.handle.close();
        }
      }),
  };
}
