// Renders a gpuwise HTML report in headless Debian chromium (playwright-core cannot download
// its own browser here) and checks it: every chart drew marks from its data, the console shows
// no errors, the page made no network request, no script from the data ran (a dialog would
// open), a table wider than the page scrolls inside its own box (the page itself never gets
// wider than the window, so no column is cut off), and the given texts appear as text. Saves a screenshot. Exit 0 when all hold.
// Usage: node render.mjs REPORT.html SCREENSHOT.png [TEXT ...]
import { chromium } from 'playwright-core';
import path from 'node:path';

const [report, screenshot, ...texts] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const failures = [];
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [], requests = [], dialogs = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  await page.goto('file://' + path.resolve(report));
  const charts = await page.evaluate(async () => {
    await window.gpuwiseCharts;
    return [...document.querySelectorAll('[data-chart]')].map((el) => ({
      title: el.parentElement.querySelector('h3')?.textContent,
      rendered: el.getAttribute('data-rendered') === 'true',
      // Marks drawn from data (axes and legends have other roles).
      marks: el.querySelectorAll('g.role-mark > path, g.role-mark > rect, g.role-mark > g').length,
    }));
  });
  const body = await page.evaluate(() => document.body.innerText);
  const layout = await page.evaluate(() => ({
    pageWidth: document.documentElement.scrollWidth,
    windowWidth: window.innerWidth,
    tables: [...document.querySelectorAll('table')].map((t) => {
      const box = t.parentElement;
      return { wide: t.scrollWidth > box.clientWidth + 1, overflow: getComputedStyle(box).overflowX,
               reachable: box.scrollWidth >= t.scrollWidth - 1, columns: t.rows[0]?.cells.length || 0 };
    }),
  }));
  await page.screenshot({ path: screenshot, fullPage: true });
  if (charts.length === 0) failures.push('no charts');
  for (const c of charts) if (!c.rendered || c.marks === 0) failures.push(`chart "${c.title}" drew ${c.marks} marks`);
  for (const e of errors) failures.push('console: ' + e);
  for (const r of requests) failures.push('network request: ' + r);
  for (const d of dialogs) failures.push('a script from the data ran: ' + d);
  for (const t of texts) if (!body.includes(t)) failures.push('text not shown: ' + t);
  if (layout.pageWidth > layout.windowWidth + 1) failures.push(`the page is ${layout.pageWidth} px wide in a ${layout.windowWidth} px window`);
  layout.tables.forEach((t, i) => {
    if (t.wide && !(t.overflow === 'auto' || t.overflow === 'scroll')) failures.push(`table ${i + 1} (${t.columns} columns) is clipped, not scrolled`);
    if (!t.reachable) failures.push(`table ${i + 1}: its last columns cannot be scrolled to`);
  });
  console.log(JSON.stringify({ charts, layout, errors, requests, dialogs, failures }));
} finally {
  await browser.close();
}
process.exit(failures.length ? 1 : 0);
