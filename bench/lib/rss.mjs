// Preload (`node --import bench/lib/rss.mjs …`): at exit, writes the process's
// peak resident memory to $BENCH_RSS_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.BENCH_RSS_FILE) writeFileSync(process.env.BENCH_RSS_FILE, JSON.stringify({ maxRssMb: process.resourceUsage().maxRSS / 1024 }));
});
