/** The landing page's whole stylesheet: system fonts only, so the page loads nothing. */
export const landingPageCss = `
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6478; --line: #dde2ea; --accent: #2454c5; --soft: #f5f7fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fff; }
header { background: var(--soft); border-bottom: 1px solid var(--line); padding: 2rem 1.5rem 1.5rem; }
header h1 { margin: 0; font-size: 1.9rem; }
header p { margin: .25rem 0 0; color: var(--muted); }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; display: grid; grid-template-columns: 15rem minmax(0, 1fr); gap: 2.5rem; }
nav.toc { position: sticky; top: 1rem; align-self: start; font-size: .92rem; }
nav.toc h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 1.2rem 0 .4rem; }
nav.toc ul { list-style: none; margin: 0; padding: 0; }
nav.toc li { margin: .2rem 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.apis { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; margin: 0 0 2rem; padding: 0; list-style: none; }
.apis li { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; background: #fff; }
.apis h3 { margin: 0 0 .3rem; font-size: 1.05rem; }
.apis p { margin: 0 0 .6rem; color: var(--muted); font-size: .92rem; }
.apis .formats { font-size: .85rem; }
p.samples { color: var(--muted); font-size: .92rem; margin: -1rem 0 2rem; }
h2 { font-size: 1.5rem; margin: 2.5rem 0 .8rem; padding-top: .5rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.15rem; margin: 1.8rem 0 .5rem; }
h4, h5, h6 { font-size: 1rem; margin: 1.4rem 0 .4rem; }
code { font: .88em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: .1em .3em; border-radius: 4px; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .9rem 1rem; overflow-x: auto; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-size: .92rem; }
th, td { border: 1px solid var(--line); padding: .45rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--soft); }
td.retry-yes { color: #1a7f37; font-weight: 600; }
td.retry-no { color: var(--muted); }
blockquote { margin: 1rem 0; padding: .2rem 1rem; border-left: 4px solid var(--line); color: var(--muted); }
figure.diagram { margin: 1rem 0; overflow-x: auto; }
svg.sequence { max-width: 100%; height: auto; font: 13px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg.sequence .actor { fill: var(--soft); stroke: #8a94a8; }
svg.sequence .actor-name { text-anchor: middle; font-weight: 600; fill: var(--ink); }
svg.sequence .lifeline { stroke: #b5bdcb; stroke-dasharray: 4 4; }
svg.sequence .call, svg.sequence .reply { stroke: var(--ink); stroke-width: 1.3; }
svg.sequence .reply { stroke-dasharray: 6 4; }
svg.sequence .head { fill: var(--ink); }
svg.sequence .label { text-anchor: middle; fill: var(--ink); }
footer { max-width: 72rem; margin: 2rem auto; padding: 1rem 1.5rem; color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line); }
main.single { grid-template-columns: minmax(0, 1fr); max-width: 56rem; }
@media (max-width: 50rem) { main { grid-template-columns: 1fr; } nav.toc { position: static; } }
`;
