import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';

/**
 * The one directory walker: the files under `root/base`, as `/`-separated
 * paths relative to `root`, sorted. Folders named in `skip` are not entered
 * (at any depth); symbolic links are not followed, and listed only with
 * `links` (a committed symlink is a file to git); an unreadable folder is
 * left out. Used for the prose on disk (src/app/prose.ts, the presets'
 * src/run/presets/prose-files.ts and editor-cli.ts), a case's workspace
 * (src/run/case.ts), and the one sweep for temp files of a clone from before
 * their ledgers (src/app/recover.ts).
 */
export async function filesUnder(root: string, base = '', opts: { skip?: ReadonlySet<string>; links?: boolean } = {}): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!opts.skip?.has(e.name)) await walk(r);
      } else if (e.isFile() || (opts.links && e.isSymbolicLink())) out.push(r);
    }
  };
  await walk(base);
  return out.sort();
}
