// The router explorer (How models build their experts): one token's router. The tokens' logits are
// ffn's, computed at build time (data.py); the reader picks a token or edits its logits, top-k, the
// score function, renormalisation and a bias per expert, or picks a model's routing (a preset), and
// sees each expert's score, score + bias, rank and weight, and a d3 bar chart (./lab.js, held to
// ffn's MixtureOfExperts.route in tests/test_widget_router.py; the page against ffn in
// tests/browser/test_widget_router.py). `mount` wires the steps below: build the controls, read
// them, compute, draw, describe.
import * as lab from "./lab.js";
import {formatFixed} from "../_shared/format.js";
import {readInteger, readNumber} from "../_shared/read.js";
import {escape, fragment, loadD3, uid} from "../_shared/dom.js";

const CHART = {width: 560, height: 250, top: 26, right: 10, bottom: 34, left: 46};
const DASH = "\u2014";  // an expert not chosen
const COLUMNS = ["expert", "logit", "bias", "score", "score + bias", "chosen", "weight"];

export async function mount(root) {
  const data = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  const n = data.logits[0].length;
  const id = uid("router");
  const d3 = await loadD3();  // first: if it fails, the table stays alone (loader.js)
  root.append(fragment(controls(id, data, n)));
  const form = root.querySelector("form");
  const state = {logits: data.logits[data.token].slice(), bias: data.bias.slice()};
  input(form, "token").value = String(data.token);
  input(form, "topK").value = String(data.topK);
  input(form, "score").value = data.score;
  input(form, "normalize").checked = true;  // the chapter's example renormalises
  showLogits(form, state);
  state.bias.forEach((v, i) => { input(form, `bias-${i}`).value = String(v); });
  const chart = drawChart(d3, form.querySelector("svg"), n);

  // Every change: the fields read and checked; the old numbers go; a refusal is named, else
  // the route is computed, shown in the table, described and drawn.
  const update = () => {
    const {topK, problems} = read(form, data, state, n);
    clear(form);
    form.querySelector("svg").classList.toggle("ffn-router__chart--stale", problems.length > 0);
    const note = form.querySelector("[data-note]");
    if (problems.length) {
      note.textContent = `${problems.join(" ")} No route is shown until that is fixed.`;
      return;
    }
    note.textContent = "";
    const score = input(form, "score").value, normalize = input(form, "normalize").checked;
    const result = lab.route(state.logits, topK, score, state.bias, normalize);
    const unbiased = lab.route(state.logits, topK, score, null, normalize).chosen;
    showRoute(form, result, n);
    out(form, "summary").value = summary(result);
    out(form, "change").value = change(result, unbiased, state.bias);
    chart(result, state.bias);
  };

  // A routing control changed by hand: the settings are no longer the preset's.
  const leavePreset = () => {
    input(form, "preset").value = "";
    form.querySelector("[data-preset-note]").textContent = "";
  };
  const routing = name => ["topK", "score", "normalize"].includes(name)
    || name.startsWith("bias-");
  form.addEventListener("submit", event => event.preventDefault());
  form.addEventListener("input", event => {
    const name = event.target.name;
    if (name === "token" || name === "preset") return;  // their "change" below
    if (routing(name)) leavePreset();
    update();
  });
  form.addEventListener("change", event => {
    const name = event.target.name;
    if (name === "preset") {
      const chosen = input(form, "preset").value;
      if (chosen !== "") applyPreset(form, data.presets[Number(chosen)], state, n);
      else form.querySelector("[data-preset-note]").textContent = "";
      update();
    } else if (name === "token") {
      state.logits = data.logits[Number(input(form, "token").value)].slice();  // ffn's
      showLogits(form, state);
      update();
    }
  });
  input(form, "clearBias").addEventListener("click", () => {
    for (let i = 0; i < n; i++) input(form, `bias-${i}`).value = "0";
    leavePreset();
    update();
  });
  update();
}

const input = (form, name) => form.elements.namedItem(name);
const out = (form, name) => form.querySelector(`[data-result="${name}"]`);

/** The controls set as a model routes (data.py's ROUTINGS), and what they cannot show. */
function applyPreset(form, preset, state, n) {
  input(form, "topK").value = String(preset.topK);
  input(form, "score").value = preset.score;
  input(form, "normalize").checked = preset.normalize;
  state.bias = preset.bias.slice();
  for (let i = 0; i < n; i++) input(form, `bias-${i}`).value = String(preset.bias[i]);
  form.querySelector("[data-preset-note]").textContent = preset.note;
}

// ---- build the controls: the token, top-k, score and a row per expert; the chart's frame

function controls(id, data, n) {
  // Each cell names its column (data-label): in a narrow widget the header row is hidden
  // and each expert's row is a card of two lines, its cells labelled (extra.css); the roles
  // keep the table a table for screen readers when CSS lays it out as a grid.
  const cell = (column, markup) =>
    `<td role="cell" data-label="${COLUMNS[column]}">${markup}</td>`;
  const field = (name, what, i, range) => `<label class="ffn-visually-hidden"
      for="${id}-${name}-${i}">${what} of expert ${i}</label><input id="${id}-${name}-${i}"
      name="${name}-${i}" type="number" step="0.01" min="${-range}" max="${range}" required>`;
  const rows = Array.from({length: n}, (_, i) => `<tr role="row" data-expert="${i}">
      <th scope="row" role="rowheader"><span class="ffn-router__expert">expert </span>${i}</th>
      ${cell(1, field("logit", "Logit", i, data.logitRange))}
      ${cell(2, field("bias", "Bias", i, data.biasRange))}
      ${cell(3, `<output data-result="score-${i}"></output>`)}
      ${cell(4, `<output data-result="choice-${i}"></output>`)}
      ${cell(5, `<output data-result="rank-${i}"></output>`)}
      ${cell(6, `<output data-result="weight-${i}"></output>`)}
    </tr>`).join("");
  return `
    <form class="ffn-widget__live ffn-router" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Router explorer</strong>: one
        token's router. Pick a token or edit its logits, choose top-k and the score, and give
        experts a bias: the bias only chooses, the weights come from the scores.</p>
      <div class="ffn-router__controls">
        <div class="ffn-field ffn-field--wide"><label for="${id}-preset">Routing of</label>
          <select id="${id}-preset" name="preset"><option value="">the chapter's example,
            or settings of your own</option>${data.presets.map((p, i) =>
            `<option value="${i}">${escape(p.name)}</option>`).join("")}</select></div>
        <div class="ffn-field"><label for="${id}-token">Token</label>
          <select id="${id}-token" name="token">${data.logits.map((_, t) =>
            `<option value="${t}">token ${t} of the example</option>`).join("")}</select></div>
        <div class="ffn-field"><label for="${id}-topk">Experts per token (top-k)</label>
          <input id="${id}-topk" name="topK" type="number" min="1" max="${n}" step="1"
            required></div>
        <div class="ffn-field"><label for="${id}-score">Score</label>
          <select id="${id}-score" name="score">${Object.entries(data.scores).map(
            ([value, label]) => `<option value="${value}">${escape(label)}</option>`)
            .join("")}</select></div>
        <div class="ffn-field ffn-field--check"><input id="${id}-normalize" name="normalize"
          type="checkbox"><label for="${id}-normalize">Renormalise the chosen weights to sum
          to 1</label></div>
        <button type="button" name="clearBias" class="md-button">Set every bias to
          0</button>
      </div>
      <p class="ffn-widget__note" data-preset-note aria-live="polite"></p>
      <div class="ffn-table"><table class="ffn-router__table" role="table">
        <thead role="rowgroup"><tr role="row">${COLUMNS.map(name =>
          `<th scope="col" role="columnheader">${name}</th>`).join("")}</tr></thead>
        <tbody role="rowgroup">${rows}</tbody></table></div>
      <p class="ffn-widget__note" data-note aria-live="polite"></p>
      <p class="ffn-router__summary" aria-live="polite"><output data-result="summary"></output>
        <output data-result="change"></output></p>
      <svg class="ffn-plot ffn-router__chart" viewBox="0 0 ${CHART.width} ${CHART.height}"
        role="img" aria-labelledby="${id}-chart-title">
        <title id="${id}-chart-title">Bar chart of each expert's score for the token: the
          chosen experts' bars are filled and labelled with their weights; a dashed line marks
          score plus bias where an expert has a bias</title>
      </svg>
      <p class="ffn-router__legend" aria-hidden="true">
        <span class="ffn-router__key ffn-router__key--chosen"></span>chosen (w: its weight)
        <span class="ffn-router__key"></span>not chosen
        <span class="ffn-router__key ffn-router__key--bias"></span>score + bias (what chooses)
      </p>
    </form>`;
}

function showLogits(form, state) {
  state.logits.forEach((v, i) => { input(form, `logit-${i}`).value = formatFixed(v, 3); });
}

// ---- read them: top-k, each logit and bias, checked; what is wrong, in words

function number(form, name, low, high, what) {
  const text = input(form, name).value.trim();
  const v = Number(text);
  if (text === "" || !Number.isFinite(v)) return `${what} must be a number.`;
  if (v < low || v > high) {
    return `${what} must be from ${String(low).replace("-", "\u2212")} to ${high}.`;
  }
  return v;
}

/** Top-k (a BigInt) and the problems found; the logits and biases read go into ``state``. */
function read(form, data, state, n) {
  const problems = [];
  // "2", "2.0" and "1e0" are whole numbers, as the number field and ffn hold them; "2.5" not.
  const topText = input(form, "topK").value.trim();
  const topK = readInteger(topText);
  if (topK === null && readNumber(topText) !== null) {
    problems.push(`Top-k must be a whole number from 1 to ${n}: ${topText} is not whole.`);
  } else if (topK === null || topK < 1n || topK > BigInt(n)) {
    problems.push(`Top-k must be a whole number from 1 to ${n}.`);
  }
  for (let i = 0; i < n; i++) {
    // A logit field still showing the token's logit, rounded, stands for ffn's unrounded
    // one; anything else typed there is the logit.
    const logit = number(form, `logit-${i}`, -data.logitRange, data.logitRange,
                         `The logit of expert ${i}`);
    if (typeof logit === "string") problems.push(logit);
    else if (input(form, `logit-${i}`).value !== formatFixed(state.logits[i], 3)) {
      state.logits[i] = logit;
    }
    const bias = number(form, `bias-${i}`, -data.biasRange, data.biasRange,
                        `The bias of expert ${i}`);
    if (typeof bias === "string") problems.push(bias);
    else state.bias[i] = bias;
  }
  return {topK, problems};
}

// ---- draw: the route in the table, and the chart

function clear(form) {
  for (const element of form.querySelectorAll("output")) element.value = "";
  for (const row of form.querySelectorAll("tbody tr")) {
    row.classList.remove("ffn-router__row--chosen");
  }
}

function showRoute(form, result, n) {
  const rank = new Map(result.chosen.map((e, r) => [e, r]));
  for (let i = 0; i < n; i++) {
    out(form, `score-${i}`).value = formatFixed(result.scores[i], 3);
    out(form, `choice-${i}`).value = formatFixed(result.choice[i], 3);
    out(form, `rank-${i}`).value = rank.has(i) ? lab.ordinal(rank.get(i) + 1) : DASH;
    out(form, `weight-${i}`).value = rank.has(i) ? formatFixed(result.weights[rank.get(i)], 3)
      : DASH;
    form.querySelector(`tr[data-expert="${i}"]`).classList.toggle("ffn-router__row--chosen",
                                                                 rank.has(i));
  }
}

/** The chart's axes in ``svg``; returns the function that draws a route on them. */
function drawChart(d3, element, n) {
  const svg = d3.select(element);
  const x = d3.scaleBand().domain(d3.range(n))
    .range([CHART.left, CHART.width - CHART.right]).padding(0.25);
  const y = d3.scaleLinear().range([CHART.height - CHART.bottom, CHART.top]);
  const xAxis = svg.append("g").attr("class", "ffn-router__axis")
    .attr("transform", `translate(0,${CHART.height - CHART.bottom})`);
  const yAxis = svg.append("g").attr("class", "ffn-router__axis")
    .attr("transform", `translate(${CHART.left},0)`);
  svg.append("text").attr("class", "ffn-router__axis-label")
    .attr("x", CHART.left - 36).attr("y", CHART.top - 12).text("score");
  const bars = svg.append("g"), marks = svg.append("g"), labels = svg.append("g");
  const zero = svg.append("line").attr("class", "ffn-router__zero")
    .attr("x1", CHART.left).attr("x2", CHART.width - CHART.right);

  return (result, bias) => {
    const {scores, choice, chosen, weights} = result;
    const rank = new Map(chosen.map((e, r) => [e, r]));
    const top = Math.max(...scores, ...choice);
    y.domain([Math.min(0, ...choice), top > 0 ? top * 1.18 : 1]).nice();
    xAxis.call(d3.axisBottom(x).tickFormat(i => `E${i}`).tickSizeOuter(0));
    yAxis.call(d3.axisLeft(y).ticks(5).tickSizeOuter(0));
    zero.attr("y1", y(0)).attr("y2", y(0));
    bars.selectAll("rect").data(scores).join("rect")
      .attr("class", (_, i) => `ffn-router__bar${rank.has(i) ? " ffn-router__bar--chosen" : ""}`)
      .attr("x", (_, i) => x(i)).attr("width", x.bandwidth())
      .attr("y", p => y(Math.max(p, 0))).attr("height", p => Math.abs(y(0) - y(p)));
    const biased = d3.range(n).filter(i => bias[i] !== 0);
    marks.selectAll("line").data(biased).join("line").attr("class", "ffn-router__mark")
      .attr("x1", i => x(i) - 3).attr("x2", i => x(i) + x.bandwidth() + 3)
      .attr("y1", i => y(choice[i])).attr("y2", i => y(choice[i]));
    labels.selectAll("text").data(chosen).join("text").attr("class", "ffn-router__weight")
      .attr("x", e => x(e) + x.bandwidth() / 2)
      .attr("y", e => y(Math.max(scores[e], choice[e], 0)) - 5)
      .text((e, r) => `w=${formatFixed(weights[r], 3)}`);
  };
}

// ---- describe: the route and what the bias changed, in words (for screen readers too)

function summary(result) {
  const many = result.chosen.length > 1;
  return `Expert${many ? "s" : ""} ${lab.listWords(result.chosen.map(String))}`
    + ` chosen, weight${many ? "s" : ""} `
    + `${lab.listWords(result.weights.map(w => formatFixed(w, 3)))}.`;
}

function change(result, unbiased, bias) {
  if (bias.every(b => b === 0)) return "No bias: the scores alone choose.";
  const {added, removed} = lab.biasSwap(result.chosen, unbiased);
  const several = added.length > 1, s = several ? "s" : "";
  return added.length === 0
    ? "The bias changes no expert chosen; the weights come from the unbiased scores."
    : `With the bias, expert${s} ${lab.listWords(added.map(String))} replace`
      + `${several ? "" : "s"} expert${s} ${lab.listWords(removed.map(String))}; the `
      + "weights come from the unbiased scores.";
}
