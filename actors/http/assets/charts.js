// The dashboard's charts: learning curves and the MOP schedule with Chart.js
// (Debian's libjs-chart.js, served by this binary), parallel coordinates
// drawn on a plain canvas. Each chart keeps one series per config; the
// highlighted config is drawn on top and the others faded.
"use strict";

const CerebroCharts = (() => {
  function colour(config, alpha) {
    const hue = (config * 137.508) % 360;
    return `hsla(${hue.toFixed(0)}, 65%, 45%, ${alpha === undefined ? 1 : alpha})`;
  }

  function styled(config, highlighted) {
    const faded = highlighted !== null && highlighted !== config;
    return { colour: colour(config, faded ? 0.15 : 1), width: highlighted === config ? 4 : 2 };
  }

  // Learning curves: x = epoch, one line per config.
  function makeCurves(canvas, onPick) {
    return new Chart(canvas, {
      type: "line",
      data: { datasets: [] },
      options: {
        animation: false,
        parsing: false,
        scales: { x: { type: "linear", title: { display: true, text: "epoch" }, ticks: { stepSize: 1 } },
                  y: { title: { display: true, text: "" } } },
        plugins: { legend: { position: "bottom", onClick: (e, item, legend) => onPick(legend.chart.data.datasets[item.datasetIndex].config) } },
        onClick: (e, elements, chart) => { if (elements.length) onPick(chart.data.datasets[elements[0].datasetIndex].config); },
      },
    });
  }

  function updateCurves(chart, configs, series, metricName, highlighted) {
    const datasets = configs.map((c) => {
      const s = styled(c.config, highlighted);
      const points = c.epochs.map((e) => ({ x: e.epoch, y: series === "metric" ? e[metricName] : e[series] }))
                              .filter((p) => typeof p.y === "number");
      return { label: `config ${c.config}`, config: c.config, data: points, borderColor: s.colour,
               backgroundColor: s.colour, borderWidth: s.width, pointRadius: 3, order: highlighted === c.config ? 0 : 1 };
    });
    chart.data.datasets = datasets;
    chart.options.scales.y.title.text = series === "metric" ? metricName : series;
    epochAxis(chart, configs);
    chart.update("none");
  }

  // The epoch axis runs from 0 to the last epoch shown (at least 1), whole
  // epochs only: left to itself Chart.js spans a single epoch as -1..1.
  function epochAxis(chart, configs) {
    const last = Math.max(0, ...configs.flatMap((c) => c.epochs.map((e) => e.epoch)));
    Object.assign(chart.options.scales.x, { min: 0, max: Math.max(1, last), ticks: { stepSize: 1, precision: 0 } });
  }

  // The schedule: one lane per worker, one floating bar per unit (start to
  // end of its span), one series per config.
  function makeSchedule(canvas, onPick) {
    return new Chart(canvas, {
      type: "bar",
      data: { labels: [], datasets: [] },
      options: {
        animation: false,
        indexAxis: "y",
        maintainAspectRatio: false,
        scales: { x: { type: "linear", title: { display: true, text: "seconds since the run started" } },
                  y: { stacked: false } },
        plugins: {
          legend: { position: "bottom", onClick: (e, item, legend) => onPick(legend.chart.data.datasets[item.datasetIndex].config) },
          tooltip: { callbacks: { label: (ctx) => {
            const u = ctx.raw.unit;
            return `config ${u.config} partition ${u.partition} epoch ${u.epoch}: ${u.start_s.toFixed(1)}-${(u.worker_end_s ?? u.end_s).toFixed(1)} s, durable at ${u.end_s.toFixed(1)} s`;
          } } },
        },
        onClick: (e, elements, chart) => { if (elements.length) onPick(chart.data.datasets[elements[0].datasetIndex].config); },
      },
    });
  }

  // `configs`: every config of the experiment, so the legend lists the ones
  // that have not run a unit yet too.
  function updateSchedule(chart, units, highlighted, configs) {
    const workers = [...new Set(units.filter((u) => !u.rolled_back).map((u) => u.worker))].sort((a, b) => a - b);
    const byConfig = new Map((configs || []).map((config) => [config, []]));
    for (const u of units) {
      if (u.rolled_back) continue;
      if (!byConfig.has(u.config)) byConfig.set(u.config, []);
      // The worker's time (dispatch to result): its commit overlaps the next unit.
      byConfig.get(u.config).push({ x: [u.start_s, u.worker_end_s ?? u.end_s], y: `worker ${u.worker}`, unit: u });
    }
    chart.data.labels = workers.map((w) => `worker ${w}`);
    chart.data.datasets = [...byConfig.keys()].sort((a, b) => a - b).map((config) => {
      const s = styled(config, highlighted);
      return { label: `config ${config}`, config, data: byConfig.get(config), backgroundColor: s.colour,
               borderColor: highlighted === config ? "#000" : s.colour, borderWidth: highlighted === config ? 1 : 0,
               grouped: false, barPercentage: 0.8, categoryPercentage: 1.0 };
    });
    chart.canvas.parentNode.style.height = `${Math.max(160, 60 + 46 * workers.length)}px`;
    chart.update("none");
  }

  // Parallel coordinates: one vertical axis per hyper-parameter that varies
  // (numbers on a linear or log scale, words as categories) and one for the
  // metric; one polyline per config.
  function drawParallel(canvas, configs, metricName, highlighted, onPick) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 500, height = canvas.clientHeight || 260;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const keys = [...new Set(configs.flatMap((c) => Object.keys(c.params || {})))].sort();
    const varying = keys.filter((k) => new Set(configs.map((c) => JSON.stringify(c.params[k]))).size > 1);
    const axes = varying.map((k) => axisFor(k, configs.map((c) => c.params[k])));
    axes.push(axisFor(metricName, configs.map((c) => c.metric), true));
    const top = 24, bottom = height - 24, left = 40, right = width - 40;
    const xOf = (i) => (axes.length === 1 ? (left + right) / 2 : left + (i * (right - left)) / (axes.length - 1));
    ctx.font = "12px system-ui, sans-serif";
    ctx.textAlign = "center";
    axes.forEach((a, i) => {
      ctx.strokeStyle = "#9aa3b2";
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(xOf(i), top); ctx.lineTo(xOf(i), bottom); ctx.stroke();
      ctx.fillStyle = "#1d2330";
      ctx.fillText(a.name, xOf(i), top - 8);
      ctx.fillStyle = "#7a8394";
      ctx.fillText(a.label(1), xOf(i), top + 12 > bottom ? top : top + 12);
      ctx.fillText(a.label(0), xOf(i), bottom + 14);
    });
    const order = [...configs].sort((a, b) => (a.config === highlighted) - (b.config === highlighted));
    const lines = [];
    for (const c of order) {
      const s = styled(c.config, highlighted);
      const values = varying.map((k) => c.params[k]).concat([c.metric]);
      const points = values.map((v, i) => [xOf(i), v === null || v === undefined ? null : bottom - axes[i].position(v) * (bottom - top)]);
      ctx.strokeStyle = s.colour;
      ctx.lineWidth = s.width;
      ctx.beginPath();
      let drawing = false;
      for (const [x, y] of points) {
        if (y === null) { drawing = false; continue; }
        if (drawing) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        drawing = true;
      }
      ctx.stroke();
      // Dots too: a config without a metric yet still shows where its parameters are.
      ctx.fillStyle = s.colour;
      for (const [x, y] of points) {
        if (y === null) continue;
        ctx.beginPath(); ctx.arc(x, y, s.width + 1.5, 0, 2 * Math.PI); ctx.fill();
      }
      lines.push({ config: c.config, points });
    }
    canvas.onclick = (event) => {
      const r = canvas.getBoundingClientRect();
      const x = event.clientX - r.left, y = event.clientY - r.top;
      let best = null, bestDistance = 12;
      for (const l of lines)
        for (const [px, py] of l.points)
          if (py !== null && Math.hypot(px - x, py - y) < bestDistance) { best = l.config; bestDistance = Math.hypot(px - x, py - y); }
      if (best !== null) onPick(best);
    };
    return { series: lines.length, axes: axes.map((a) => a.name) };
  }

  function axisFor(name, values, isMetric) {
    const present = values.filter((v) => v !== null && v !== undefined);
    const numeric = present.length > 0 && present.every((v) => typeof v === "number");
    if (numeric) {
      const lo = Math.min(...present), hi = Math.max(...present);
      const log = !isMetric && lo > 0 && hi / lo >= 10;
      const f = (v) => (log ? Math.log10(v) : v);
      const span = f(hi) - f(lo) || 1;
      const fmt = (v) => (Math.abs(v) < 0.01 || Math.abs(v) >= 1e4 ? v.toExponential(1) : +v.toPrecision(3));
      return { name, position: (v) => (f(v) - f(lo)) / span + (f(hi) === f(lo) ? 0.5 : 0), label: (end) => fmt(end ? hi : lo) };
    }
    const words = [...new Set(present.map((v) => JSON.stringify(v)))].sort();
    return { name, position: (v) => (words.length === 1 ? 0.5 : words.indexOf(JSON.stringify(v)) / (words.length - 1)),
             label: (end) => (words.length ? (end ? words[words.length - 1] : words[0]) : "") };
  }

  return { colour, makeCurves, updateCurves, makeSchedule, updateSchedule, drawParallel };
})();
