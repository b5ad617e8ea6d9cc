import type { CommandIO } from '../io.js';

export async function run(_io: CommandIO): Promise<void> {
  throw new Error('git tune review is being built');
}
