// Makes the built CLI executable, so `git tune` finds `git-tune` on PATH.
import { chmodSync } from 'node:fs';
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
