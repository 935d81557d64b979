import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STYLESHEET } from '../../src/http/ui/assets/stylesheet.js';

/** The declarations of the rule whose selector is exactly `selector`. */
function rule(selector: string): Map<string, string> {
  const escaped = selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`(?:^|[\\n}])\\s*${escaped}\\s*\\{([^}]*)\\}`).exec(STYLESHEET);
  assert.ok(match?.[1] !== undefined, `no rule for ${selector}`);
  const declarations = new Map<string, string>();
  for (const part of match[1].split(';')) {
    const colon = part.indexOf(':');
    if (colon > 0) declarations.set(part.slice(0, colon).trim(), part.slice(colon + 1).trim());
  }
  return declarations;
}

const root = rule(':root');

/** A colour as #rrggbb, `var(--name)` resolved through :root. */
function colour(value: string | undefined): string {
  assert.ok(value !== undefined, 'no colour');
  const variable = /var\(--([\w-]+)\)/.exec(value);
  if (variable?.[1] !== undefined) return colour(root.get(`--${variable[1]}`));
  const hex = /#([0-9a-f]{6}|[0-9a-f]{3})\b/i.exec(value)?.[1];
  assert.ok(hex !== undefined, `not a colour: ${value}`);
  return hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex.toLowerCase();
}

/** The colour a declaration of a rule names (in `border: 1px solid #x`, the colour part). */
const of = (selector: string, property: string): string => colour(rule(selector).get(property));

/** WCAG 2.2 relative luminance (definition "relative luminance", sRGB). */
function luminance(hex: string): number {
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.2 contrast ratio: (L1 + 0.05) / (L2 + 0.05), lighter over darker. */
function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

describe('stylesheet contrast (WCAG 2.2 AA)', () => {
  it('computes ratios as WCAG defines them', () => {
    assert.equal(contrast('000000', 'ffffff'), 21);
    assert.equal(Math.round(contrast('ff9e0d', 'ffffff') * 100) / 100, 2.07);
  });

  const card = colour('var(--card)');
  const page = colour('var(--page)');
  const text: [string, string, string][] = [
    ['body text on the page', colour('var(--ink)'), page],
    ['body text on a card', colour('var(--ink)'), card],
    ['muted text (.lead, .hint) on a card', of('.hint', 'color'), card],
    ['muted text on the page', of('.muted', 'color'), page],
    ['links on a card', of('a', 'color'), card],
    ['error text', of('.error', 'color'), of('.error', 'background')],
    ['notice text ("revoked")', of('.notice', 'color'), of('.notice', 'background')],
    ['caution text (a device’s code)', of('.caution', 'color'), of('.caution', 'background')],
    ['primary button', of('button.primary', 'color'), of('button.primary', 'background')],
    ['primary button, hovered', of('button.primary', 'color'), of('button.primary:hover', 'background')],
    ['button, hovered', of('button', 'color'), of('button:hover', 'background')],
    ['danger button', of('button.danger', 'color'), card],
    ['danger button, hovered', of('button.danger', 'color'), of('button.danger:hover', 'background')],
    ['playground success status', of('.exchange .status-ok', 'color'), card],
    ['playground error status', of('.exchange .status-error', 'color'), card],
  ];
  for (const [what, foreground, background] of text) {
    it(`${what}: at least 4.5:1 (1.4.3)`, () => {
      const ratio = contrast(foreground, background);
      assert.ok(ratio >= 4.5, `#${foreground} on #${background} is ${ratio.toFixed(2)}:1`);
    });
  }

  // The ring is drawn outside the control (outline-offset), so what it must stand out from is the
  // surface the control sits on: a card, the page, or an error or notice box.
  const focus = of(':focus-visible', 'outline');
  const surfaces: [string, string][] = [
    ['a card', card],
    ['the page', page],
    ['an error box', of('.error', 'background')],
    ['a notice box', of('.notice', 'background')],
    ['a hovered button', of('button:hover', 'background')],
  ];
  for (const [where, surface] of surfaces) {
    it(`focus ring on ${where}: at least 3:1 (1.4.11)`, () => {
      const ratio = contrast(focus, surface);
      assert.ok(ratio >= 3, `focus #${focus} on #${surface} is ${ratio.toFixed(2)}:1`);
    });
  }

  it('input and button borders on a card: at least 3:1 (1.4.11)', () => {
    for (const selector of [
      'button',
      'input[type=text], input:not([type]), input[type=password], select, textarea',
    ]) {
      const ratio = contrast(of(selector, 'border'), card);
      assert.ok(ratio >= 3, `${selector} border is ${ratio.toFixed(2)}:1`);
    }
  });
});
