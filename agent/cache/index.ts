// The site agent's image cache: the store on disk, the grants it is served under and the
// background puller, fed from each session answer (cacheImages and the digests deploys pin).
import type { BootEntry } from '../../core/boot/boot-entry';
import type { AgentLog } from '../common/log';
import { CacheGrants } from './grants';
import type { CacheImage } from '../../services/images/prewarm';
import type { CacheImageReport, SiteSectionStatus } from '../../core/schemas/agent-sessions';
import { CachePuller } from './puller';
import { ImageCacheStore } from './store';

interface ImageCacheReport {
  images: CacheImageReport[];
  status: SiteSectionStatus;
}

export class SiteImageCache {
  readonly store: ImageCacheStore;
  readonly grants = new CacheGrants();
  readonly puller: CachePuller;

  constructor(options: { dir: string; maxBytes?: number; log: AgentLog; concurrency?: number; trustedCaPems?: readonly string[] }) {
    this.store = new ImageCacheStore(options.dir);
    this.puller = new CachePuller(this.store, options.log, {
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.trustedCaPems ? { trustedCaPems: options.trustedCaPems } : {}),
    });
  }

  want(images: readonly CacheImage[], pinnedDigests: readonly string[]): void {
    this.puller.want(images, pinnedDigests);
  }

  /**
   * The images inventory and the site section's status. A boot entry that sanboots an ISO the
   * site does not name as an iso cache image fails the section, naming the entry (its machine
   * waits meanwhile); an image that failed to cache is named first.
   */
  report(entries: readonly BootEntry[] = []): ImageCacheReport {
    const status = this.puller.status();
    const unnamed = entries.find((entry) => entry.sanbootSha256 !== undefined && !this.puller.names(entry.sanbootSha256, 'iso'));
    if (status.state !== 'FAILED' && unnamed) {
      const message = `boot entry ${unnamed.mac} (workflow ${unnamed.workflowId}) sanboots ${unnamed.sanbootSha256}, which the site does not name as an iso cache image`;
      return { images: this.puller.report(), status: { state: 'FAILED', message: message.slice(0, 512) } };
    }
    return { images: this.puller.report(), status };
  }
}
