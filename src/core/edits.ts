import type { EditState } from './fold.js';

/**
 * Where an edit stands, in one line for `status`, `log` and the README:
 * confirmed (by which run), reverted (by which commit), kept (by whom, why),
 * unconfirmed or pending. Pure.
 */
export function editFate(edit: EditState): string {
  switch (edit.status) {
    case 'pending': return 'pending: no run has tried it yet';
    case 'confirmed': return `confirmed by ${edit.settledBy}`;
    case 'unconfirmed': return edit.triedBy ? `unconfirmed by ${edit.triedBy}` : `unconfirmed: ${edit.settledBy ?? 'no run tried it'}`;
    case 'reverted':
      return `reverted by ${edit.settledBy?.slice(0, 7) ?? 'a revert'} (${edit.triedBy ? `${edit.triedBy} did not confirm it` : 'no run had tried it'})`;
    case 'kept':
      return `kept by ${edit.kept?.by || 'someone'}: ${edit.kept?.why || 'no reason given'} (${edit.triedBy ? `unconfirmed by ${edit.triedBy}` : 'no run tried it'})`;
  }
}
