// Decompression of a deploy image's stream: gzip with node:zlib; zstd with node:zlib where
// this Node has it (22.15+), else the `zstd` program (Debian's zstd) as a stream filter.
import { spawn } from 'node:child_process';
import { Duplex, PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { IronflowError } from '../../core/errors';

type Compression = 'none' | 'gzip' | 'zstd';

type ZlibWithZstd = typeof zlib & { createZstdDecompress?: () => Transform };

function zstdProgram(): Duplex {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 2048) stderr += chunk.toString('utf8');
  });
  const duplex = Duplex.from({ writable: child.stdin, readable: child.stdout });
  child.on('error', (error) => duplex.destroy(new IronflowError('UNSUPPORTED', `zstd images need Node 22.15+ or the zstd program: ${error.message}`)));
  child.on('exit', (code) => {
    if (code !== 0 && code !== null)
      duplex.destroy(new IronflowError('DRIVER_ERROR', `zstd could not decompress the image: ${stderr.trim() || `exit ${code}`}`, { reason: 'decompress' }));
  });
  return duplex;
}

export function decompressor(compression: Compression): Duplex {
  if (compression === 'none') return new PassThrough();
  if (compression === 'gzip') return zlib.createGunzip();
  const native = (zlib as ZlibWithZstd).createZstdDecompress;
  return native ? native() : zstdProgram();
}
