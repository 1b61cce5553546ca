// The memory explorer (purpose.md, "Reading the FFN as a memory"): the figure's block and token
// (data.py, in the widget's JSON); the reader moves the token's three numbers and picks ReLU or
// exact GELU; each unit's match x . k_i + b1_i, its coefficient h_i and the output y follow,
// with a d3 bar chart of h and y. The arithmetic is ./lab.js, held to ffn in
// tests/test_widget_memory.py; the page against ffn in tests/browser/test_widget_memory.py.
// `mount` wires the steps below: build the controls, read them, compute, draw, describe.
import {formatFixed} from "../_shared/format.js";
import {firingSentence, memoryForward} from "./lab.js";
import {escape, fragment, loadD3, uid} from "../_shared/dom.js";

const MINUS = "\u2212";
const CHART = {width: 560, height: 250, top: 28, bottom: 34, left: 44, split: 380, gap: 56};

export async function mount(root) {
  const data = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  const {W1, b1, W2, b2, token} = data;
  const id = uid("memory");
  const d3 = await loadD3();  // first: if it fails, the table stays alone (loader.js)
  root.append(fragment(controls(id, data)));
  const live = root.querySelector(".ffn-memory");
  const x = [...token];
  const problems = new Map();  // coordinate -> what is wrong with what was typed
  const chart = drawChart(d3, live.querySelector("svg"), data);

  // Every change: a token with a wrong number shows none; else the block runs on it.
  const update = () => {
    if (problems.size) {
      showProblems(live, problems);
      return;
    }
    const activation = live.querySelector(`input[name="${id}-activation"]:checked`).value;
    const r = memoryForward(W1, b1, W2, b2, x, activation);
    showUnits(live, r, data.digits);
    out(live, "fires").value = firingSentence(r.fires);
    chart(r);
  };
  const setAll = values => {
    values.forEach((v, j) => {
      x[j] = v;
      slider(live, j).value = String(v);  // the slider shows the nearest step; x keeps v
      number(live, j).value = String(v);
    });
    problems.clear();
  };

  for (const j of token.keys()) {
    slider(live, j).addEventListener("input", () => {
      x[j] = Number(slider(live, j).value);
      number(live, j).value = slider(live, j).value;
      problems.delete(j);
      update();
    });
    number(live, j).addEventListener("input", () => {
      const v = readTyped(number(live, j).value, j, data.typed);
      if (typeof v === "string") {
        problems.set(j, v);
      } else {
        problems.delete(j);
        x[j] = v;
        slider(live, j).value = String(v);
      }
      update();
    });
  }
  for (const radio of live.querySelectorAll(`input[name="${id}-activation"]`)) {
    radio.addEventListener("change", update);
  }
  live.querySelector("[data-reset]").addEventListener("click", () => {
    setAll(token);
    update();
  });
  setAll(token);
  update();
}

const shown = (v, digits) => formatFixed(v, digits).replace("-", MINUS);
const plain = v => String(v).replace("-", MINUS);
const slider = (live, j) => live.querySelector(`input[name="x${j}"]`);
const number = (live, j) => live.querySelector(`input[name="x${j}Number"]`);
const out = (live, name) => live.querySelector(`[data-result="${name}"]`);

// ---- build the controls: a slider and a field per number of the token, the activation, and
// the tables and chart the results go into

function controls(id, data) {
  const {token, activations} = data;
  const [lo, hi, step] = data.slider, [typedLo, typedHi] = data.typed;
  const dModel = token.length, dFf = data.b1.length;
  const units = [...Array(dFf).keys()], coords = [...Array(dModel).keys()];
  return `
    <div class="ffn-widget__live ffn-memory" role="group" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Memory explorer</strong>: move the
        token's ${dModel} numbers or change the activation; the figure's block recomputes each
        unit's match with its key, its coefficient h<sub>i</sub> and the output y.</p>
      <div class="ffn-memory__controls">
        <fieldset class="ffn-memory__token"><legend>Token x (starts as the figure's)</legend>
          ${coords.map(j => `<div class="ffn-field ffn-memory__coordinate">
            <label for="${id}-x${j}">x${j}</label>
            <input id="${id}-x${j}" type="range" name="x${j}" min="${lo}" max="${hi}"
              step="${step}">
            <label class="ffn-visually-hidden" for="${id}-x${j}-number">x${j}, typed</label>
            <input id="${id}-x${j}-number" type="number" name="x${j}Number" min="${typedLo}"
              max="${typedHi}" step="${step}"></div>`).join("")}
        </fieldset>
        <fieldset class="ffn-memory__activation"><legend>Activation σ</legend>
          ${Object.entries(activations).map(([name, label]) => `<div
            class="ffn-field--check"><input id="${id}-${name}" type="radio"
            name="${id}-activation" value="${name}"${name === "relu" ? " checked" : ""}><label
            for="${id}-${name}">${escape(label)}</label></div>`).join("")}
          <button type="button" class="ffn-memory__reset" data-reset>Back to the
            figure's token</button>
        </fieldset>
      </div>
      <p class="ffn-widget__note" data-note aria-live="polite"></p>
      <p class="ffn-memory__summary" aria-live="polite">With this token,
        <output data-result="fires" aria-label="which units fire"></output>
        (a unit fires when x · k<sub>i</sub> + b1<sub>i</sub> &gt; 0).</p>
      <div class="ffn-memory__results">
        <div class="ffn-table"><table class="ffn-memory__table">
          <thead><tr><th scope="col">unit i</th><th scope="col">x · k<sub>i</sub> +
            b1<sub>i</sub></th><th scope="col">h<sub>i</sub> = σ(…)</th>
            <th scope="col">fires</th></tr></thead>
          <tbody>${units.map(i => `<tr data-unit="${i}"><th scope="row">${i}</th>
            <td><output data-result="pre${i}" aria-label="unit ${i}: x · k${i} + b1${i}">
              </output></td>
            <td><output data-result="h${i}" aria-label="h${i}"></output></td>
            <td data-fires="${i}"></td></tr>`).join("")}</tbody>
        </table></div>
        <div class="ffn-table"><table class="ffn-memory__table ffn-memory__y">
          <caption>y = Σ h<sub>i</sub> v<sub>i</sub> + b2</caption>
          <tbody>${coords.map(k => `<tr><th scope="row">y${k}</th>
            <td><output data-result="y${k}" aria-label="y${k}"></output></td></tr>`)
            .join("")}</tbody>
        </table></div>
      </div>
      <svg class="ffn-plot ffn-memory__chart" viewBox="0 0 ${CHART.width} ${CHART.height}"
        role="img" aria-labelledby="${id}-chart-title">
        <title id="${id}-chart-title"></title>
      </svg>
    </div>`;
}

// ---- read them: a typed number of the token, or what is wrong with it

function readTyped(typed, j, [typedLo, typedHi]) {
  const text = typed.trim(), v = Number(text);
  if (text === "" || !Number.isFinite(v) || v < typedLo || v > typedHi) {
    return `x${j} needs a number from ${plain(typedLo)} to ${plain(typedHi)}` +
      `${text === "" ? "" : `, not ${text.replace("-", MINUS)}`}.`;
  }
  return v;
}

// ---- draw: the block's numbers in the tables (or none, with the problems named), and the
// chart

function showProblems(live, problems) {
  live.querySelector("[data-note]").textContent = [...problems.values()].join(" ");
  for (const element of live.querySelectorAll("output")) element.value = "";
  for (const cell of live.querySelectorAll("[data-fires]")) cell.textContent = "";
  for (const row of live.querySelectorAll("tr[data-unit]")) {
    row.classList.remove("ffn-memory__fires");
  }
  live.querySelector(".ffn-memory__summary").hidden = true;
  // No bars for a token that is not one.
  live.querySelector("svg").classList.add("ffn-memory__chart--stale");
}

function showUnits(live, r, digits) {
  live.querySelector("[data-note]").textContent = "";
  live.querySelector(".ffn-memory__summary").hidden = false;
  live.querySelector("svg").classList.remove("ffn-memory__chart--stale");
  const fires = new Set(r.fires);
  for (const i of r.h.keys()) {
    out(live, `pre${i}`).value = shown(r.pre[i], digits);
    out(live, `h${i}`).value = shown(r.h[i], digits);
    live.querySelector(`[data-fires="${i}"]`).textContent = fires.has(i) ? "yes" : "no";
    live.querySelector(`tr[data-unit="${i}"]`).classList.toggle("ffn-memory__fires",
                                                                fires.has(i));
  }
  for (const k of r.y.keys()) out(live, `y${k}`).value = shown(r.y[k], digits);
}

/** The chart's d3 scales and axes in ``svg``: bars of h_i (units that fire filled, others
 * outlined) and, on the right, bars of y. Returns the function that draws a result. */
function drawChart(d3, svg, data) {
  const dModel = data.token.length, dFf = data.b1.length;
  const units = [...Array(dFf).keys()], coords = [...Array(dModel).keys()];
  const show = v => shown(v, data.digits);
  const chart = d3.select(svg);
  const bottom = CHART.height - CHART.bottom;
  const hX = d3.scaleBand().domain(units).range([CHART.left, CHART.split]).padding(0.25);
  const yX = d3.scaleBand().domain(coords).range([CHART.split + CHART.gap, CHART.width - 8])
    .padding(0.25);
  const hY = d3.scaleLinear().range([bottom, CHART.top]);
  const yY = d3.scaleLinear().range([bottom, CHART.top]);
  const axes = chart.append("g").attr("class", "ffn-memory__axes");
  const hAxis = axes.append("g").attr("transform", `translate(${CHART.left},0)`);
  const yAxis = axes.append("g").attr("transform", `translate(${CHART.split + CHART.gap},0)`);
  const hZero = axes.append("line"), yZero = axes.append("line");
  axes.append("g").attr("transform", `translate(0,${bottom})`)
    .call(d3.axisBottom(hX).tickSize(0).tickFormat(i => `h${i}`));
  axes.append("g").attr("transform", `translate(0,${bottom})`)
    .call(d3.axisBottom(yX).tickSize(0).tickFormat(k => `y${k}`));
  axes.selectAll(".domain").remove();
  const hBars = chart.append("g").selectAll("rect").data(units).join("rect");
  const hLabels = chart.append("g").attr("class", "ffn-memory__labels")
    .selectAll("text").data(units).join("text");
  const yBars = chart.append("g").selectAll("rect").data(coords).join("rect")
    .attr("class", "ffn-memory__bar ffn-memory__bar--y");
  const yLabels = chart.append("g").attr("class", "ffn-memory__labels")
    .selectAll("text").data(coords).join("text");
  const title = svg.querySelector("title");

  const barTo = (scale, v) => ({y: Math.min(scale(0), scale(v)),
                                height: Math.abs(scale(v) - scale(0))});
  return r => {
    const hMax = Math.max(1, d3.max(r.h)), hMin = Math.min(-0.25, d3.min(r.h));
    hY.domain([hMin, hMax]).nice();
    const yMax = Math.max(0.5, d3.max(r.y, Math.abs));
    yY.domain([-yMax, yMax]).nice();
    hAxis.call(d3.axisLeft(hY).ticks(5).tickFormat(d3.format(".1f")));
    yAxis.call(d3.axisLeft(yY).ticks(5).tickFormat(d3.format(".1f")));
    axes.selectAll(".domain").remove();
    hZero.attr("x1", CHART.left).attr("x2", CHART.split).attr("y1", hY(0)).attr("y2", hY(0));
    yZero.attr("x1", CHART.split + CHART.gap).attr("x2", CHART.width - 8)
      .attr("y1", yY(0)).attr("y2", yY(0));
    const fires = new Set(r.fires);
    hBars.attr("x", i => hX(i)).attr("width", hX.bandwidth())
      .attr("y", i => barTo(hY, r.h[i]).y).attr("height", i => barTo(hY, r.h[i]).height)
      .attr("class", i => `ffn-memory__bar ffn-memory__bar--${fires.has(i) ? "fires" : "silent"}`);
    hLabels.attr("x", i => hX(i) + hX.bandwidth() / 2)
      .attr("y", i => (r.h[i] >= 0 ? hY(r.h[i]) - 5 : hY(r.h[i]) + 13))
      .text(i => show(r.h[i]));
    yBars.attr("x", k => yX(k)).attr("width", yX.bandwidth())
      .attr("y", k => barTo(yY, r.y[k]).y).attr("height", k => barTo(yY, r.y[k]).height);
    yLabels.attr("x", k => yX(k) + yX.bandwidth() / 2)
      .attr("y", k => (r.y[k] >= 0 ? yY(r.y[k]) - 5 : yY(r.y[k]) + 13))
      .text(k => show(r.y[k]));
    title.textContent = describe(r, dFf, dModel);
  };
}

// ---- describe: the chart's title, for screen readers

function describe(r, dFf, dModel) {
  return `Bar chart of the ${dFf} coefficients h0 to h${dFf - 1} (units that `
    + `fire filled, the others outlined) and of the ${dModel} numbers of y: `
    + `${firingSentence(r.fires)}`;
}
