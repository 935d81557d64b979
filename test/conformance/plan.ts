import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { MODULES, type ModuleName } from './modules.js';
import {
  browserSkip,
  launchChrome,
  startOp,
  variantName,
  type Chrome,
  type Op,
  type Variant,
} from '../helpers/conformance-variants.js';

/** A certification plan's entry: modules run with one variant (a response type and response mode). */
export interface PlanEntry {
  variant: Variant;
  modules: readonly ModuleName[];
  /** The plan, where a file runs several. */
  plan?: string;
}

/**
 * Runs a plan as node:test suites: one Chromium for the file, one Gatehouse per store, one test per
 * module of each entry, named by the module's test name, in the plan's order.
 */
export function runPlan(title: string, entries: readonly PlanEntry[]): void {
  describe(title, { skip: browserSkip }, () => {
    let chrome: Chrome;
    before(async () => {
      chrome = await launchChrome();
    });
    after(async () => {
      await chrome?.close();
    });
    for (const backend of backends()) {
      describe(backend, () => {
        let op: Op;
        before(async () => {
          op = await startOp(backend, chrome);
        });
        after(async () => {
          await op?.close();
        });
        for (const entry of entries) {
          const name = variantName(entry.variant);
          describe(entry.plan === undefined ? name : `${entry.plan}: ${name}`, () => {
            for (const name of entry.modules) {
              it(name, () => MODULES[name](op, entry.variant));
            }
          });
        }
      });
    }
  });
}
