// The site agent's image cache: the store on disk, the grants it is served under and the
// background puller, fed from each session answer (cacheImages and the digests deploys pin).
import type { AgentLog } from '../site/log';
import { CacheGrants } from './grants';
import { CachePuller, type CacheSectionStatus, type ImageReport, type WantedImage } from './puller';
import { ImageCacheStore } from './store';

export interface ImageCacheReport {
  images: ImageReport[];
  status: CacheSectionStatus;
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

  want(images: readonly WantedImage[], pinnedDigests: readonly string[]): void {
    this.puller.want(images, pinnedDigests);
  }

  report(): ImageCacheReport {
    return { images: this.puller.report(), status: this.puller.status() };
  }
}
