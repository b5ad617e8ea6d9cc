import type { CommandIO } from '../io.js';

const pending = async (_io: CommandIO): Promise<void> => {
  throw new Error('git tune hooks is being built');
};
export const install = pending;
export const uninstall = pending;
export const hook = pending;
