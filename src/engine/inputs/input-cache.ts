import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { copyFile, link, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FetchResult } from './fetcher.js';
import { isAbandonedTemp, TEMP_PREFIX, tempName } from '../storage/storage.js';
import { writeWhole } from '../storage/whole-file.js';

/** What the cache keeps about one URL. */
interface Entry {
  url: string;
  bytes: number;
  /** Epoch ms until which the body may be reused without asking the server. */
  freshUntil: number;
  etag?: string;
  lastModified?: string;
  /** Epoch ms of the last use, for least-recently-used eviction. */
  usedAt: number;
}

/** How an input was obtained, for logs and tests. */
export type CacheOutcome = 'hit' | 'revalidated' | 'miss' | 'bypass';

/** Downloads a URL to a file, optionally with conditional request headers. */
export type Fetch = (destination: string, headers: Record<string, string>) => Promise<FetchResult>;

const header = (headers: IncomingHttpHeaders | undefined, name: string): string | undefined => {
  const value = headers?.[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/**
 * The HTTP caching rules mediaflow follows (RFC 9111, as a shared cache): `no-store` and
 * `private` are never kept; `max-age` (or `Expires`) says how long a body stays fresh; `no-cache` keeps it but asks
 * the server every time; without those, 10% of the age since `Last-Modified`, at most a day.
 * A body with neither freshness nor a validator (ETag, Last-Modified) is not kept.
 */
export function cachePolicy(
  headers: IncomingHttpHeaders | undefined,
  now = Date.now(),
): Omit<Entry, 'url' | 'bytes' | 'usedAt'> | undefined {
  const control = (header(headers, 'cache-control') ?? '').toLowerCase();
  // A shared service is a shared cache: what is private to one requester is not kept.
  if (/(^|[,\s])(no-store|private)($|[,\s=])/.test(control)) return undefined;
  const etag = header(headers, 'etag');
  const lastModified = header(headers, 'last-modified');
  const maxAge = /(?:^|[,\s])max-age=(\d+)/.exec(control)?.[1];
  const expires = Date.parse(header(headers, 'expires') ?? '');
  const modified = Date.parse(lastModified ?? '');
  let freshUntil = now;
  if (/(^|[,\s])no-cache($|[,\s=])/.test(control)) freshUntil = now;
  else if (maxAge !== undefined) freshUntil = now + Number(maxAge) * 1000;
  else if (Number.isFinite(expires)) freshUntil = expires;
  else if (Number.isFinite(modified)) freshUntil = now + Math.min(86_400_000, Math.max(0, now - modified) / 10);
  if (freshUntil <= now && !etag && !lastModified) return undefined;
  return { freshUntil, ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) };
}

/**
 * A size-bounded cache of downloaded inputs, so a URL many jobs use (a batch's shared music or
 * logo) is fetched once. Bodies are hard-linked into job workspaces (copied across file systems),
 * so evicting an entry never disturbs a job that uses it. Concurrent fetches of one URL share one
 * download.
 */
export class InputCache {
  private entries: Map<string, Entry> | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  /**
   * URLs whose last answer could not be kept, until when: fetches of them neither wait for each other nor are stored.
   */
  private readonly uncacheable = new Map<string, number>();

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /** Puts `url`'s body at `destination`, from the cache when it may be reused. */
  async fetch(url: string, destination: string, fetch: Fetch): Promise<FetchResult & { cache: CacheOutcome }> {
    const entries = await this.load();
    const key = createHash('sha256').update(url).digest('hex');
    const bypass = async () => ({ ...(await fetch(destination, {})), cache: 'bypass' as const });
    if ((this.uncacheable.get(key) ?? 0) > Date.now()) return bypass();
    // Another job is fetching this URL right now: wait for it, then use what it stored.
    const pending = this.inFlight.get(key);
    if (pending) await pending.catch(() => undefined);
    if ((this.uncacheable.get(key) ?? 0) > Date.now()) return bypass();
    const entry = entries.get(key);
    if (entry && entry.freshUntil > Date.now()) {
      entry.usedAt = Date.now();
      if (await this.place(key, destination)) return { bytes: entry.bytes, cache: 'hit' };
    }
    let settle!: () => void;
    this.inFlight.set(key, new Promise<void>((resolve) => (settle = resolve)));
    try {
      const validators: Record<string, string> = {};
      if (entry?.etag) validators['if-none-match'] = entry.etag;
      if (entry?.lastModified) validators['if-modified-since'] = entry.lastModified;
      const temp = path.join(this.dir, tempName());
      try {
        const result = await fetch(temp, validators);
        const policy = cachePolicy(result.headers);
        if (result.notModified && entry) {
          Object.assign(entry, policy ?? { freshUntil: Date.now() }, { usedAt: Date.now() });
          await this.saveMeta(key, entry);
          if (await this.place(key, destination)) return { bytes: entry.bytes, cache: 'revalidated' };
          // The body vanished under us (evicted by another process): fetch it plainly.
          return bypass();
        }
        if (!policy || result.bytes > this.maxBytes) {
          this.rememberUncacheable(key);
          await moveFile(temp, destination);
          return { ...result, cache: 'bypass' };
        }
        this.uncacheable.delete(key);
        const stored: Entry = { url, bytes: result.bytes, usedAt: Date.now(), ...policy };
        // The index entry first, then the body: a body is never without its entry, so another process
        // loading the cache meanwhile never takes it for a leftover (an entry without its body is a miss).
        await this.saveMeta(key, stored);
        await rename(temp, this.bodyOf(key));
        entries.set(key, stored);
        await this.evict(key);
        await this.place(key, destination);
        return { ...result, cache: 'miss' };
      } finally {
        await rm(temp, { force: true });
      }
    } finally {
      this.inFlight.delete(key);
      settle();
    }
  }

  /** Bytes the cache holds now. */
  async size(): Promise<number> {
    let total = 0;
    for (const entry of (await this.load()).values()) total += entry.bytes;
    return total;
  }

  /** Notes for a minute that a URL's answers are not kept; the oldest notes go past a thousand. */
  private rememberUncacheable(key: string): void {
    this.uncacheable.delete(key);
    this.uncacheable.set(key, Date.now() + 60_000);
    if (this.uncacheable.size > 1000) this.uncacheable.delete(this.uncacheable.keys().next().value!);
  }

  private bodyOf = (key: string) => path.join(this.dir, `${key}.body`);
  private metaOf = (key: string) => path.join(this.dir, `${key}.json`);

  /** Links (or copies) a cached body to `destination`; false when the body is gone. */
  private async place(key: string, destination: string): Promise<boolean> {
    try {
      await link(this.bodyOf(key), destination);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        this.entries?.delete(key);
        return false;
      }
      await copyFile(this.bodyOf(key), destination);
    }
    return true;
  }

  private async saveMeta(key: string, entry: Entry): Promise<void> {
    await writeWhole(this.metaOf(key), JSON.stringify(entry));
  }

  /** Drops least recently used entries until the cache fits, never the one just stored. */
  private async evict(keep: string): Promise<void> {
    const entries = await this.load();
    let total = await this.size();
    const oldestFirst = [...entries.entries()]
      .filter(([key]) => key !== keep)
      .sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [key, entry] of oldestFirst) {
      if (total <= this.maxBytes) break;
      entries.delete(key);
      total -= entry.bytes;
      await rm(this.bodyOf(key), { force: true });
      await rm(this.metaOf(key), { force: true });
    }
  }

  /** Reads the index from disk once, dropping what a killed process left half-written. */
  private async load(): Promise<Map<string, Entry>> {
    if (this.entries) return this.entries;
    await mkdir(this.dir, { recursive: true });
    const entries = new Map<string, Entry>();
    const names = await readdir(this.dir);
    for (const name of names) {
      // A body whose index entry was never written is unknown to the cache: drop it.
      if (name.endsWith('.body') && !names.includes(`${name.slice(0, -5)}.json`))
        await rm(path.join(this.dir, name), { force: true });
    }
    for (const name of names) {
      if (name.startsWith(TEMP_PREFIX)) {
        // Another process sharing the cache may be downloading into its own temp file right now.
        if (isAbandonedTemp(name)) await rm(path.join(this.dir, name), { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const key = name.slice(0, -5);
      try {
        const entry = JSON.parse(await readFile(this.metaOf(key), 'utf8')) as Entry;
        entries.set(key, entry);
      } catch {
        await rm(this.metaOf(key), { force: true });
        await rm(this.bodyOf(key), { force: true });
      }
    }
    this.entries ??= entries;
    return this.entries;
  }
}

/** Renames a file, copying when the target is on another file system. */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
  }
}
