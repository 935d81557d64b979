/**
 * The one stylesheet of the browser pages, served at /assets/style. Colours meet WCAG 2.2 AA contrast:
 * text 4.5:1 on its background (1.4.3), the focus ring and control borders 3:1 against what is next to
 * them (1.4.11); test/browser/contrast.test.ts computes every pair from this text.
 */
export const STYLESHEET = `
:root {
  --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --page: #f4f6f8; --card: #fff;
  --accent: #0b57d0; --accent-ink: #fff; --danger: #b3261e; --ok: #1a7436; --focus: #c05f00;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--page);
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em; }
code { overflow-wrap: anywhere; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 1rem; top: .5rem; background: var(--card); padding: .5rem 1rem; z-index: 2; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }

.topbar { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem 1rem;
  padding: .75rem 1.25rem; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { display: inline-flex; align-items: center; gap: .5rem; font-weight: 700; font-size: 1.125rem;
  color: var(--ink); text-decoration: none; }
.brand img { border-radius: 6px; }
.topbar nav { display: flex; flex-wrap: wrap; align-items: center; gap: .25rem 1rem; font-size: .9375rem; }
.topbar nav [aria-current=page] { color: var(--ink); font-weight: 600; text-decoration: none; }
.who { color: var(--muted); overflow-wrap: anywhere; }
form.inline { display: inline; margin: 0; }

main { margin: 2rem auto; padding: 1.5rem; background: var(--card); border: 1px solid var(--line);
  border-radius: 12px; }
main.narrow { max-width: 30rem; }
main.wide { max-width: 72rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 .5rem; overflow-wrap: anywhere; }
h2 { font-size: 1.125rem; margin: 0 0 .5rem; overflow-wrap: anywhere; }
.lead { margin: 0 0 1.25rem; color: var(--muted); }
.muted { color: var(--muted); }
.client-host { color: var(--muted); font-weight: 400; overflow-wrap: anywhere; }
.client-host .host { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .9em; }
.small { font-size: .875rem; }
.hint { margin: .25rem 0 0; font-size: .875rem; color: var(--muted); }

.stack > * + * { margin-top: 1rem; }
.field label { display: block; font-weight: 600; margin-bottom: .25rem; }
input[type=text], input:not([type]), input[type=password], select, textarea {
  width: 100%; padding: .625rem .75rem; font: inherit; color: inherit; background: var(--card);
  border: 1px solid #8c959f; border-radius: 8px; }
textarea { min-height: 4.5rem; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .875rem; }
fieldset { margin: 0; padding: .75rem 1rem 1rem; border: 1px solid var(--line); border-radius: 8px; }
legend { font-weight: 600; padding: 0 .25rem; overflow-wrap: anywhere; }
.check { display: flex; align-items: flex-start; gap: .625rem; padding: .375rem 0; }
.check input { width: 1.25rem; height: 1.25rem; margin: .15rem 0 0; flex: none; accent-color: var(--accent); }
.check code, .scope-list code { color: var(--muted); }
.check.fixed { margin: 0; }
.check.fixed > span:first-child { width: 1.25rem; flex: none; text-align: center; color: var(--accent); font-weight: 700; }
h2.or { margin: 1.75rem 0 0; padding-top: 1.25rem; border-top: 1px solid var(--line); }

.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; }
button { font: inherit; font-weight: 600; padding: .625rem 1.25rem; border-radius: 8px; cursor: pointer;
  border: 1px solid #8c959f; background: var(--card); color: var(--ink); min-height: 2.75rem; }
button:hover { background: #eef1f4; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
button.primary:hover { background: #0842a0; }
button.danger { color: var(--danger); border-color: var(--danger); }
button.danger:hover { background: #fdecea; }
button.link { border: 0; background: none; padding: 0; min-height: 0; color: var(--accent);
  font-weight: 400; text-decoration: underline; }
.actions button { flex: 1 1 8rem; }
/* Decision 40: "Continue with NAME", a link that looks like the buttons beside it. */
a.button { display: flex; align-items: center; justify-content: center; gap: .5rem; font-weight: 600;
  padding: .625rem 1.25rem; border-radius: 8px; border: 1px solid #8c959f; background: var(--card);
  color: var(--ink); min-height: 2.75rem; text-decoration: none; box-sizing: border-box; }
a.button:hover { background: #eef1f4; }
a.button img { width: 1.25rem; height: 1.25rem; flex: none; }
.providers { list-style: none; margin: 1rem 0 0; padding: 0; display: grid; gap: .5rem; }

.error { color: var(--danger); background: #fdecea; border: 1px solid #f3b8b4; padding: .625rem .75rem;
  border-radius: 8px; }
.caution { color: var(--ink); background: #fff8e1; border: 1px solid #d4a72c; padding: .625rem .75rem;
  border-radius: 8px; margin: 0 0 1rem; }
.caution p { margin: 0; }
.caution p + p { margin-top: .375rem; }
.user-code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1.375rem;
  font-weight: 700; letter-spacing: .12em; text-transform: uppercase; }
input.user-code { font-size: 1.25rem; }
.notice { color: var(--ok); background: #e6f4ea; border: 1px solid #a8d5b5; padding: .625rem .75rem;
  border-radius: 8px; }

.apps { list-style: none; margin: 0; padding: 0; }
.app { padding: 1rem 0; border-top: 1px solid var(--line); }
.app dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 .75rem; }
.app dt { color: var(--muted); }
.app dd { margin: 0; }
.security-section + .security-section { margin-top: 2rem; }
.app h3 { margin: 0 0 .5rem; font-size: 1.0625rem; }
.scope-list { margin: 0; padding-left: 1.125rem; }
.empty { color: var(--muted); }
.spaced { margin-top: 1.5rem; }
.links { margin: 0; padding-left: 1.125rem; }
.links li + li { margin-top: .5rem; }

.playground { display: grid; gap: 1.5rem; grid-template-columns: minmax(0, 22rem) minmax(0, 1fr); }
.playground .grants { display: grid; gap: .5rem; }
.playground .grants button { width: 100%; }
.log { display: grid; gap: 1rem; }
.exchange { border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.exchange h3 { margin: 0; padding: .5rem .75rem; font-size: .9375rem; background: var(--page);
  border-bottom: 1px solid var(--line); }
.exchange pre { margin: 0; padding: .75rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.exchange .status-ok { color: var(--ok); }
.exchange .status-error { color: var(--danger); }

@media (max-width: 40rem) {
  main { margin: 0; border: 0; border-radius: 0; padding: 1.25rem 1rem; }
  .topbar { padding: .75rem 1rem; }
  .playground { grid-template-columns: minmax(0, 1fr); }
  .app dl { grid-template-columns: minmax(0, 1fr); }
  .app dt { margin-top: .25rem; }
}
/* Second factors (decision 34): the QR code on white (scanners need the quiet zone), the setup key and
   recovery codes in a monospace face that can break on a narrow screen. */
.qr-code svg { width: 12rem; height: 12rem; background: #fff; }
.setup-key { font-family: ui-monospace, monospace; word-break: break-word; }
.recovery-codes { list-style: none; padding: 0; display: grid; gap: .25rem .75rem;
  grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); font-family: ui-monospace, monospace; }
/* The admin console (decision 42): tables that scroll inside their box on a narrow screen, a search
   beside its button, facts as a definition list. Colours are the ones above. */
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
.toolbar { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; justify-content: space-between;
  margin: 0 0 1rem; }
form.search { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
form.search label { font-weight: 600; }
form.search input { width: auto; flex: 1 1 10rem; }
input[type=search] { padding: .625rem .75rem; font: inherit; color: inherit; background: var(--card);
  border: 1px solid #8c959f; border-radius: 8px; }
a.button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
a.button.danger { color: var(--danger); border-color: var(--danger); }
.table-wrap { overflow-x: auto; max-width: 100%; position: relative; }
td code { word-break: break-all; }
table { width: 100%; border-collapse: collapse; font-size: .9375rem; }
th, td { text-align: left; padding: .5rem .625rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
.pager { display: flex; flex-wrap: wrap; gap: 1rem; margin-top: 1rem; color: var(--muted); }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .25rem 1rem; margin: 0 0 1.25rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
code.secret { font-size: 1rem; }
/* The dashboard (decision 43): charts two abreast where they fit, one under another on a phone; each
   chart's box is as wide as its column, which the script sizes the canvas to. */
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 26rem), 1fr)); gap: 1.5rem; }
.chart-figure { margin: 0; min-width: 0; }
.chart-figure h3 { margin: 0; font-size: 1rem; }
.chart-figure figcaption p { margin: .125rem 0 .5rem; }
.chart { width: 100%; min-height: 0; overflow: hidden; }
.chart-figure td, .chart-figure th { font-variant-numeric: tabular-nums; }
table.state th[scope=row] { width: 12rem; }
.error-text { color: var(--danger); font-weight: 600; }
@media (max-width: 40rem) {
  .facts { grid-template-columns: minmax(0, 1fr); }
  table.state th[scope=row] { width: auto; }
  .chart-figure th, .chart-figure td { padding: .375rem; }
  .chart-figure th[scope=row] { overflow-wrap: anywhere; }
  .facts dt { margin-top: .25rem; }
}
`;
