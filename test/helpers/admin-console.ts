import type { Page } from 'playwright-core';

/** Problems a person would meet (as layout.test.ts): sideways scrolling, unlabelled controls, no landmarks. */
export async function pageProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > window.innerWidth) {
      problems.push(`scrolls sideways: ${document.documentElement.scrollWidth} > ${window.innerWidth}`);
    }
    for (const control of document.querySelectorAll<HTMLInputElement>(
      'input:not([type=hidden]), textarea, select',
    )) {
      if ((control.labels?.length ?? 0) === 0) problems.push(`no label: ${control.outerHTML.slice(0, 80)}`);
    }
    for (const button of document.querySelectorAll('button')) {
      if ((button.textContent ?? '').trim() === '')
        problems.push(`unnamed button: ${button.outerHTML.slice(0, 80)}`);
    }
    if (document.querySelector('main') === null) problems.push('no main landmark');
    if (document.querySelector('nav[aria-label="Admin console"]') === null)
      problems.push('no console navigation');
    if (document.querySelectorAll('h1').length !== 1) problems.push('not exactly one h1');
    return problems;
  });
}
