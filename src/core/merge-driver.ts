import { HAND_END, START_RE, extractHandSection } from './readme.js';
import { README_FILE, USAGE_FILE } from './paths.js';

/**
 * The merge driver for the files git-tune generates (docs/git-model.md#merge-driver):
 * `.tune/<name>/README.md` and `.tune/<name>/USAGE.md`. Native `git revert`
 * and `git cherry-pick` of a step replay its change to these files on a tip
 * whose copy was regenerated since, and git's line merge stops on a conflict
 * in text nobody wrote by hand. Pure: the CLI reads the three versions.
 *
 * Decisions:
 * - The generated part is ours (the branch tip's): it is a function of the
 *   history (src/app/reports.ts), and the incoming change is a step of some
 *   other history. The commit the revert or cherry-pick makes is a hand
 *   commit, and, as after any hand commit, the next step regenerates the file
 *   for the history it lands on (a driver cannot: git tells it neither the
 *   commit being replayed nor the message the hooks will give it).
 * - The README's hand-written part (between its markers) is merged three
 *   ways, as a whole: the side that changed it wins; both sides changed it
 *   differently is a conflict, marked around the two texts, in that part only.
 * - A README whose markers are missing on some side is not ours to decide:
 *   git's own line merge runs (`fallback`).
 */
export type DriverOutcome =
  | { kind: 'merged'; text: string }
  | { kind: 'conflict'; text: string }
  | { kind: 'fallback'; why: string };

/** Which generated file a repository path is, or null (`.tune/<name>/README.md` → readme). */
export function generatedFileKind(file: string): 'readme' | 'usage' | null {
  const m = /^\.tune\/[^/]+\/([^/]+)$/.exec(file.replace(/\\/g, '/'));
  if (!m) return null;
  return m[1] === README_FILE ? 'readme' : m[1] === USAGE_FILE ? 'usage' : null;
}

/** The lines `.git/info/attributes` holds for the driver (docs/git-model.md#merge-driver). */
export const MERGE_DRIVER_NAME = 'git-tune';
export const ATTRIBUTE_LINES = [`.tune/*/${README_FILE} merge=${MERGE_DRIVER_NAME}`, `.tune/*/${USAGE_FILE} merge=${MERGE_DRIVER_NAME}`] as const;

/** `readme` with its hand-written part replaced by `hand` (the markers kept). */
export function withHandSection(readme: string, hand: string): string | null {
  const start = START_RE.exec(readme);
  if (!start) return null;
  const from = start.index + start[0].length;
  const end = readme.indexOf(HAND_END, from);
  if (end < 0) return null;
  return `${readme.slice(0, from)}\n${hand}\n${readme.slice(end)}`;
}

/** The three versions of a generated file (null: the side does not have it) merged. */
export function mergeGenerated(file: string, base: string | null, ours: string, theirs: string | null): DriverOutcome {
  const kind = generatedFileKind(file);
  if (kind === null) return { kind: 'fallback', why: `${file} is not a file git-tune generates` };
  if (kind === 'usage') return { kind: 'merged', text: ours };
  const hand = (x: string | null) => (x === null ? null : extractHandSection(x));
  const [b, o, t] = [hand(base), hand(ours), hand(theirs)];
  if (o === null || (base !== null && b === null) || (theirs !== null && t === null)) {
    return { kind: 'fallback', why: `${file}: the hand-written part's markers are missing on one side` };
  }
  const theirsHand = t ?? b ?? o;
  const baseHand = b ?? o;
  if (theirsHand === baseHand || theirsHand === o) return { kind: 'merged', text: ours };
  if (o === baseHand) return { kind: 'merged', text: withHandSection(ours, theirsHand)! };
  const marked = ['<<<<<<< ours', o, '=======', theirsHand, '>>>>>>> theirs'].join('\n');
  return { kind: 'conflict', text: withHandSection(ours, marked)! };
}
