import { readdirSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import path from 'node:path';

/**
 * Calls `onEntry` with the path, relative to `root`, of every file or folder that appears under `root`, in folders
 * made later too, until `close()`. Node 20's `fs.watch(..., { recursive: true })` on Linux throws an uncaught ENOENT
 * when a folder goes between its event and its scan (a job's workspace removed as the job ends); this watches each
 * folder on its own, reads what a new folder already holds once its watch is on, and lets a vanished folder go.
 */
export function watchTree(root: string, onEntry: (relative: string) => void): { close: () => void } {
  const watchers = new Map<string, FSWatcher>();
  const follow = (folder: string) => {
    if (watchers.has(folder)) return;
    let watcher: FSWatcher | undefined;
    let entries: Dirent[];
    try {
      watcher = watch(folder, (_event, name) => {
        if (!name) return;
        const full = path.join(folder, String(name));
        onEntry(path.relative(root, full));
        if (statSync(full, { throwIfNoEntry: false })?.isDirectory()) follow(full);
      });
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      watcher?.close();
      return; // the folder is gone already
    }
    watcher.on('error', () => watcher.close());
    watchers.set(folder, watcher);
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) follow(full);
      else onEntry(path.relative(root, full));
    }
  };
  follow(root);
  return {
    close: () => {
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
