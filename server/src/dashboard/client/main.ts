/**
 * The dashboard's script, bundled by esbuild at build time (server/scripts/build-dashboard.mjs)
 * and served by Proctor under a content-hashed name. It folds the navigation on a phone, keeps what
 * is under way fresh (a list of runs, a run) and sends the pages' action forms to the API.
 */
import { sendActionForms } from './actions.ts';
import { labelCells } from './cards.ts';
import { watchLiveParts } from './live.ts';
import { foldNavigation } from './menu.ts';
import { enhanceCharts } from './charts.ts';
import { bindShortcuts } from './shortcuts.ts';
import { showFieldsOfChosenType } from './type-fields.ts';
import { reviewVisualChanges } from './visual.ts';

foldNavigation(document);
labelCells(document);
watchLiveParts(document);
sendActionForms(document);
showFieldsOfChosenType(document);
reviewVisualChanges(document);
bindShortcuts(document);
enhanceCharts(document);
