// `npm run build`'s last step: the man pages, from the commander program as
// tsc compiled it into dist/ (src/cli/man.ts renders them), written to
// dist/man/. package.json's `man` lists them, so a global install puts them
// where `man` looks, and git's `git tune --help` (`man git-tune`) finds one.
// test/e2e/man.test.ts fails when the list and the pages differ.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildProgram } from '../dist/cli/program.js';
import { renderManPages } from '../dist/cli/man.js';
import { packageVersion } from '../dist/app/version.js';

const root = new URL('..', import.meta.url).pathname;
const dir = path.join(root, 'dist', 'man');
mkdirSync(dir, { recursive: true });
const pages = renderManPages(buildProgram(), packageVersion());
const written = new Set(pages.map((p) => p.file));
for (const name of readdirSync(dir)) if (!written.has(name)) rmSync(path.join(dir, name), { force: true });
for (const page of pages) writeFileSync(path.join(dir, page.file), page.text);
