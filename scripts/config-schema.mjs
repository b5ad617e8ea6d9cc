// `npm run schema`: writes schema/config.schema.json, the JSON Schema of
// .tune/<name>/config.yaml, from the zod schema (src/contracts/config.ts) as
// tsc compiled it into dist/. The file is checked in (editors validate
// config.yaml against it); test/unit/config-schema.test.ts fails when it is
// not what the zod schema gives today, so a change to the settings that
// forgets to run this is caught.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { configJsonSchema } from '../dist/contracts/config.js';

const root = new URL('..', import.meta.url).pathname;
const file = path.join(root, 'schema', 'config.schema.json');
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, configJsonSchema());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
