// Draws the charts of the Analytics page and of a post's page with uPlot (served by the app:
// /static/uplot.js). Each chart's data is in its element's data-chart: {x: [Unix seconds],
// series: [{label, values}]}; the numbers are also in the page as text.
(() => {
  const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea'];
  function draw(el) {
    if (el.dataset.drawn || typeof uPlot === 'undefined') return;
    const data = JSON.parse(el.dataset.chart);
    const width = Math.max(260, Math.min(el.parentElement.clientWidth || 600, 900));
    const opts = {
      width,
      height: 220,
      series: [{}, ...data.series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true }))],
      axes: [{}, { size: 50 }],
      scales: { x: { time: true } },
    };
    new uPlot(opts, [data.x, ...data.series.map((s) => s.values)], el);
    el.dataset.drawn = 'true';
  }
  function drawAll() {
    for (const el of document.querySelectorAll('[data-chart]')) draw(el);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll);
  else drawAll();
})();
