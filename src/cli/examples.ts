import type { CommandUnknownOpts } from '@commander-js/extra-typings';

/**
 * The `Examples:` of the commands whose definition has none of its own
 * (README.md: every command has `--help` with examples). Keyed by the
 * command's path; added after the command's own help text, so `--help`,
 * `git tune help <command>` and the man pages show them.
 * test/unit/help-examples.test.ts fails a command without examples.
 */
const EXAMPLES: Record<string, string[]> = {
  next: ['git tune next                  # the one step that is due, and its command', 'git tune next --json           # the same as data'],
  status: ['git tune status', 'git tune status --json'],
  config: ['git tune config set concurrency 4', "git tune config set runner.command 'node agent.js'"],
  dataset: ['git tune dataset import cases.yaml', 'git tune dataset import cases/ --held-out held-out.yaml'],
  select: ['git tune select                # order the cases: classes take turns, seeded', 'git tune select --dry-run      # print the order, write nothing'],
  batch: ['git tune batch                 # plan the batch next says is due (one commit)', 'git tune batch --size 4', 'git tune batch --dry-run'],
  run: ['git tune run                   # run what is due; Ctrl-C keeps finished cases', 'git tune run --concurrency 2   # fewer cases at once, this run only', 'git tune run --dry-run'],
  final: ['git tune final                 # the final check: the whole selection at once', 'git tune final --ci', 'git tune final --shard 1/4 --out results-1   # then: git tune final --collect results-*'],
  baseline: ['git tune baseline              # the original prose on the selection (and the held-out set)', 'git tune baseline --held-out-only'],
  report: ['git tune report batch01-nomem-run2', 'git tune report batch01-nomem-run2 --vs batch01-nomem-run1', 'git tune report final-check --json'],
  grade: ['git tune grade --draft         # write findings.md for you to finish', 'git tune grade                 # record the verdict findings.md names', 'git tune grade --verdict PASSED --run batch01-nomem-run2'],
  edit: ['git tune edit                  # the changed prose and changes.md as one commit', 'git tune edit agents/refunds.md   # only these files'],
  revert: ['git tune revert                # revert the unconfirmed and pending edits of the half', 'git tune revert 1a2b3c4'],
  undo: ['git tune undo                  # drop the last step', 'git tune undo 3 --dry-run'],
  difficult: ['git tune difficult', 'git tune difficult add billing-refund-03 --why wrong --note "asks for an exact answer"', 'git tune difficult fix billing-refund-03'],
  'difficult add': ['git tune difficult add billing-refund-03 --why wrong', 'git tune difficult add billing-refund-03 --why costly --note "12 llm calls"'],
  'difficult fix': ['git tune difficult fix billing-refund-03', 'git tune difficult fix billing-refund-03 --note "right since the refunds edit"'],
  memory: ['git tune memory candidate', 'git tune memory checkpoint'],
  'memory candidate': ['git tune memory candidate      # last good memory + what the passing run wrote'],
  'memory checkpoint': ['git tune memory checkpoint     # the candidate becomes the last good memory'],
  stop: ['git tune stop                  # auto stops at its next safe point', 'git tune stop --tuning support', 'git tune stop --fleet support'],
  demo: ['git tune demo                  # in a new temp dir', 'git tune demo ./try-it         # in this (new or empty) dir'],
  log: ['git tune log', 'git tune log --abandoned'],
  pr: ['git tune pr 1                  # push and open the pull request of batch 1', 'git tune pr 2 --remote upstream'],
  hooks: ['git tune hooks install', 'git tune hooks uninstall'],
  'hooks install': ['git tune hooks install         # chained with the hooks already there'],
  'hooks uninstall': ['git tune hooks uninstall       # puts back the hooks that were there'],
  push: ['git tune push                  # the branch, its run tags and the logs ref', 'git tune push upstream'],
  pull: ['git tune pull', 'git tune pull upstream'],
  import: ["git tune import finetune --prose 'agents/**/*.md' --runner 'node agent.js'", 'git tune import finetune --name desk --dry-run'],
};

/** Adds each command's examples to its help (commands that have their own keep them). */
export function addExamples(program: CommandUnknownOpts): void {
  const walk = (command: CommandUnknownOpts, path: string[]) => {
    for (const sub of command.commands as CommandUnknownOpts[]) {
      const p = [...path, sub.name()];
      const lines = EXAMPLES[p.join(' ')];
      if (lines) sub.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`);
      walk(sub, p);
    }
  };
  walk(program, []);
}
