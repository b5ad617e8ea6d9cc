import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { usageError } from '../errors.js';
import type { Person } from './types.js';

/**
 * The author and committer, resolved the way git does: GIT_AUTHOR_* /
 * GIT_COMMITTER_* from the environment, then the repository's config, then
 * the global config (GIT_CONFIG_GLOBAL, ~/.gitconfig, XDG), then the system
 * config. isomorphic-git reads only the repository's own config.
 */
export type Env = Readonly<Record<string, string | undefined>>;

function parseIni(text: string): Map<string, string> {
  const values = new Map<string, string>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)[;#].*$/, '').trim();
    if (!line) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(.*)")?\s*\]$/.exec(line);
    if (header) {
      section = header[2] === undefined ? header[1]!.toLowerCase() : `${header[1]!.toLowerCase()}.${header[2]}`;
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (kv && section) {
      let value = (kv[2] ?? 'true').trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
      values.set(`${section}.${kv[1]!.toLowerCase()}`, value);
    }
  }
  return values;
}

async function readIni(file: string): Promise<Map<string, string>> {
  try {
    return parseIni(await fs.readFile(file, 'utf8'));
  } catch {
    return new Map();
  }
}

/** The config files git reads for a repository, narrowest first (include files aside). */
function configFiles(gitdir: string, env: Env): string[] {
  const files = [path.join(gitdir, 'config')];
  const home = env.HOME ?? os.homedir();
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    files.push(path.join(home, '.gitconfig'));
    files.push(path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'git', 'config'));
  }
  if (env.GIT_CONFIG_NOSYSTEM !== '1' && env.GIT_CONFIG_NOSYSTEM !== 'true') files.push(env.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig');
  return files;
}

const identities = new Map<string, { stamp: string; name: string | null; email: string | null }>();

/**
 * user.name and user.email as git reads them, asked of git once (every step
 * commits, and a spawn costs more than the commit's own work); asked again
 * only when a config file it reads changed (size or mtime). git itself reads
 * them (include.path, includeIf, every scope); where no git binary runs, the
 * files are read here.
 */
export async function configIdentity(gitdir: string, env: Env): Promise<{ name: string | null; email: string | null }> {
  const files = configFiles(gitdir, env);
  const stamp = (await Promise.all(files.map((f) => fs.stat(f).then((st) => `${st.size}:${st.mtimeMs}`, () => '-')))).join(' ');
  // Config given in the environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS) is part of what was read.
  const given = Object.entries(env).filter(([k]) => k.startsWith('GIT_CONFIG')).sort().map(([k, v]) => `${k}=${v}`);
  const key = [gitdir, ...files, ...given].join('\0');
  const known = identities.get(key);
  if (known?.stamp === stamp) return known;
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  let found: { name: string | null; email: string | null };
  try {
    // Promisified here, not at load: a command that never asks loads no child_process (scripts/bundle.mjs).
    const { stdout } = await promisify(execFile)('git', ['config', '--get-regexp', '^user\\.(name|email)$'], {
      cwd: path.dirname(gitdir), env: { ...childEnv, GIT_DIR: gitdir }, encoding: 'utf8',
    });
    found = { name: null, email: null };
    for (const line of stdout.split('\n')) {
      const m = /^user\.(name|email) ?(.*)$/i.exec(line);
      if (m) found[m[1]!.toLowerCase() as 'name' | 'email'] = m[2]!; // the last value wins, as with --get
    }
  } catch (err) {
    // Exit 1: neither is set anywhere. ENOENT: no git binary, read the files ourselves.
    found = (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? { name: await readIniValue(gitdir, 'user.name', env), email: await readIniValue(gitdir, 'user.email', env) }
      : { name: null, email: null };
  }
  identities.set(key, { stamp, ...found });
  return found;
}

async function readIniValue(gitdir: string, key: string, env: Env): Promise<string | null> {
  for (const file of configFiles(gitdir, env)) {
    const value = (await readIni(file)).get(key.toLowerCase());
    if (value !== undefined) return value;
  }
  return null;
}

/** Parses git's date forms we accept: `@<epoch> <tz>`, `<epoch> <tz>`, or ISO 8601. */
export function parseGitDate(text: string): { timestamp: number; timezoneOffset: number } | null {
  const raw = /^@?(\d+)(?:\s+([+-])(\d{2}):?(\d{2}))?$/.exec(text.trim());
  if (raw) {
    const sign = raw[2] === '-' ? 1 : -1; // isomorphic-git: minutes *behind* UTC
    const offset = raw[2] ? sign * (Number(raw[3]) * 60 + Number(raw[4])) : 0;
    return { timestamp: Number(raw[1]), timezoneOffset: offset === 0 ? 0 : offset };
  }
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return null;
  // Keep the zone the date was written in, as native git records it (`-04:00` → `-0400`).
  const zone = /([+-])(\d{2}):?(\d{2})$/.exec(text.trim());
  const offset = zone ? (zone[1] === '-' ? 1 : -1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  return { timestamp: Math.floor(ms / 1000), timezoneOffset: offset === 0 ? 0 : offset };
}

export async function resolveIdentity(
  gitdir: string,
  env: Env,
  now: Date,
): Promise<{ author: Person; committer: Person }> {
  const fromEnv = env.GIT_AUTHOR_NAME && env.GIT_AUTHOR_EMAIL && env.GIT_COMMITTER_NAME && env.GIT_COMMITTER_EMAIL;
  const { name: configName, email: configEmail } = fromEnv ? { name: null, email: null } : await configIdentity(gitdir, env);
  const person = (role: 'AUTHOR' | 'COMMITTER'): Person => {
    const name = env[`GIT_${role}_NAME`] ?? configName;
    const email = env[`GIT_${role}_EMAIL`] ?? configEmail ?? env.EMAIL;
    if (!name || !email) {
      throw usageError(
        'no-identity',
        'git does not know who you are: no user.name / user.email in the environment, the repository or the global config',
        'git config --global user.name "Your Name" && git config --global user.email you@example.com',
      );
    }
    const dateText = env[`GIT_${role}_DATE`];
    const date = dateText ? parseGitDate(dateText) : null;
    return {
      name,
      email,
      timestamp: date?.timestamp ?? Math.floor(now.getTime() / 1000),
      timezoneOffset: date?.timezoneOffset ?? 0,
    };
  };
  return { author: person('AUTHOR'), committer: person('COMMITTER') };
}
