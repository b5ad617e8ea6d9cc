// `npm run schema`: writes schema/, the JSON Schemas of the public contracts
// (config.yaml, a dataset case, a runner's result, a judge's output), from
// their zod schemas (src/contracts/json-schemas.ts) as tsc compiled them into
// dist/. The files are checked in and shipped (editors validate config.yaml
// and datasets against them; runners and judges in any language can check
// their output); test/unit/contract-schemas.test.ts fails when one is not what
// the zod schemas give today, so a change that forgets to run this is caught.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { contractJsonSchemas } from '../dist/contracts/json-schemas.js';

const root = new URL('..', import.meta.url).pathname;
const dir = path.join(root, 'schema');
mkdirSync(dir, { recursive: true });
for (const { file, text } of contractJsonSchemas()) {
  writeFileSync(path.join(dir, file), text);
  console.log(`wrote ${path.relative(process.cwd(), path.join(dir, file))}`);
}
