import type { CommandIO } from '../io.js';
import { usageError } from '../../errors.js';

export async function run(_io: CommandIO, dir: string): Promise<void> {
  throw usageError('unavailable', `import of ${dir} is being built`);
}
