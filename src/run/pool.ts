/**
 * Runs tasks with at most `limit` at once, in order of the list. `shouldStop`
 * is asked before each launch: once it says stop, no new task starts and the
 * running ones finish.
 */
export async function runPool<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
  shouldStop: () => boolean,
): Promise<{ launched: number }> {
  let next = 0;
  let launched = 0;
  const worker = async () => {
    while (next < items.length && !shouldStop()) {
      const item = items[next++]!;
      launched++;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return { launched };
}
