import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The program's output (src/cli/io.ts writeStdout / writeStderr), written to the file descriptor, in a
// child process: a script that writes numbered lines and ends with `end`.
const IO = fileURLToPath(new URL('../../dist/cli/io.js', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-fd-output-'));
const script = path.join(dir, 'write.mjs');
writeFileSync(script, `import { writeStdout } from ${JSON.stringify(IO)};
const pad = 'x'.repeat(1017);
for (let i = 0; i < 2048; i++) writeStdout(String(i).padStart(6, '0') + pad + '\\n');
writeStdout('end\\n');
`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every numbered line once, in order, then `end`. */
function wholeAndInOrder(text: string): boolean {
  const lines = text.trimEnd().split('\n');
  return lines.length === 2049 && lines.at(-1) === 'end' && lines.slice(0, -1).every((l, i) => l.startsWith(String(i).padStart(6, '0')));
}

describe('the output written to the file descriptor', () => {
  it('an output that would block (a non-blocking pipe, full) takes the rest through the stream, whole and in order', async () => {
    // perl (perl-base, on every Debian) makes the pipe non-blocking, as some parents hand it over, and runs the
    // script: its writes meet EAGAIN once the pipe's 64 KB are full, as nobody reads for a while.
    const nonBlocking = 'use Fcntl; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV or die';
    const child = spawn('perl', ['-e', nonBlocking, process.execPath, script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise((resolve) => child.on('close', resolve));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 400));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stdout.resume();
    expect({ code: await closed, stderr }).toEqual({ code: 0, stderr: '' });
    expect(wholeAndInOrder(out)).toBe(true);
  });

  it('a reader that closes the pipe midway ends the writing quietly: exit 0, no stack trace', () => {
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${script}" | head -c 5000 >/dev/null; echo "exit \${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('exit 0\n');
  });

  it('a blocking pipe whose reader is slow gets everything, in order', async () => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stdout.resume();
    expect(await closed).toBe(0);
    expect(wholeAndInOrder(out)).toBe(true);
  });
});
