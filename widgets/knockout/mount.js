// "Knock out a layer" (trained-ffn.md): SmolLM2-135M's top next tokens on a prompt, clean or
// with one layer's FFN output or attention output set to zero. Every run was made by
// ffn.smollm2 when the table was made (data.py, in the widget's JSON); the page only chooses
// the row and prints it, with ./lab.js (held to data.py in tests/test_widget_knockout.py; the
// page in tests/browser/test_widget_knockout.py). The steps: build the controls, read them,
// choose the row, draw the bars, describe.
import {KNOCKOUT_KINDS, changeSentence, knockoutRow, layerProfile, percentText, tokenLabel}
  from "./lab.js";
import {escape, fragment, uid} from "../_shared/dom.js";

const PROMPT_WORDS = {fact: "A fact", counting: "Counting", code: "Code"};
// The overview: a row of bars per kind, one bar per layer, in viewBox units.
const CHART = {width: 320, left: 70, right: 4, top: 6, row: 52, gap: 14};

export function mount(root) {
  const data = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  const id = uid("knockout");
  root.append(fragment(controls(id, data)));
  const live = root.querySelector(".ffn-knockout");
  const selects = Object.fromEntries(KNOCKOUT_KINDS.slice(1).map(
    kind => [kind, live.querySelector(`select[name="${kind}"]`)]));

  const update = () => {
    const {prompt, kind, layer} = read(live, id, selects);
    draw(live, data, knockoutRow(data, prompt, kind, layer));
    drawOverview(live, data, prompt, kind, layer);
    live.querySelector('[data-result="change"]').value = changeSentence(data, prompt, kind,
                                                                        layer);
  };
  for (const radio of live.querySelectorAll(`input[name="${id}-prompt"]`)) {
    radio.addEventListener("change", update);
  }
  for (const [kind, select] of Object.entries(selects)) {
    select.addEventListener("change", () => {
      // One knock-out at a time: choosing a layer of one kind clears the other.
      if (select.value !== "none") {
        for (const [other, s] of Object.entries(selects)) if (other !== kind) s.value = "none";
      }
      update();
    });
  }
  update();
}

// ---- build the controls: the prompt, a layer to zero per kind, the top tokens' table

function promptText(text) {
  return escape(tokenLabel(text));
}

function controls(id, data) {
  const layers = [...Array(data.n_layers).keys()];
  const rows = [...Array(data.top).keys()];
  return `
    <div class="ffn-widget__live ffn-knockout" role="group" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Knock out a layer</strong>:
        choose a prompt, then set one layer's FFN output or attention output to zero. The
        table shows SmolLM2-135M's ${data.top} most likely next tokens.</p>
      <fieldset class="ffn-knockout__prompts"><legend>Prompt</legend>
        ${data.prompts.map((e, i) => `<div class="ffn-field--check"><input
          id="${id}-prompt-${e.name}" type="radio" name="${id}-prompt" value="${e.name}"
          ${i === 0 ? " checked" : ""}><label for="${id}-prompt-${e.name}">${escape(
          PROMPT_WORDS[e.name] ?? e.name)}: <code>${promptText(e.text)}</code></label></div>`)
          .join("")}
      </fieldset>
      <div class="ffn-knockout__zero">
        ${Object.entries(data.kinds).map(([kind, label]) => `<div class="ffn-field">
          <label for="${id}-${kind}">Zero the ${escape(label)} output of</label>
          <select id="${id}-${kind}" name="${kind}">
            <option value="none" selected>no layer</option>
            ${layers.map(i => `<option value="${i}">layer ${i}</option>`).join("")}
          </select></div>`).join("")}
      </div>
      <p class="ffn-widget__note ffn-knockout__legend" data-legend aria-hidden="true"></p>
      <svg class="ffn-plot ffn-knockout__overview" viewBox="0 0 ${CHART.width} ${
        CHART.top + 2 * CHART.row + CHART.gap + 20}" role="img"></svg>
      <p class="ffn-knockout__change" aria-live="polite"><output data-result="change"
        aria-label="the change"></output></p>
      <div class="ffn-table"><table class="ffn-knockout__table">
        <caption>Most likely next tokens</caption>
        <thead><tr><th scope="col">rank</th><th scope="col">token</th>
          <th scope="col">probability</th></tr></thead>
        <tbody>${rows.map(r => `<tr data-rank="${r}"><th scope="row">${r + 1}</th>
          <td><output data-result="token${r}" aria-label="token ${r + 1}"></output></td>
          <td class="ffn-knockout__p"><span class="ffn-knockout__bar" aria-hidden="true"></span>
            <output data-result="p${r}" aria-label="probability ${r + 1}"></output></td></tr>`)
          .join("")}</tbody>
      </table></div>
    </div>`;
}

// ---- read them: the prompt's name and the knock-out (kind "none" with layer null)

function read(live, id, selects) {
  const prompt = live.querySelector(`input[name="${id}-prompt"]:checked`).value;
  for (const [kind, select] of Object.entries(selects)) {
    if (select.value !== "none") return {prompt, kind, layer: BigInt(select.value)};
  }
  return {prompt, kind: "none", layer: null};
}

// ---- draw: each top token, its percentage and a bar of that length (out of 100%)

function draw(live, data, row) {
  const digits = BigInt(data.digits);
  row.texts.forEach((text, r) => {
    live.querySelector(`[data-result="token${r}"]`).value = tokenLabel(text);
    live.querySelector(`[data-result="p${r}"]`).value = percentText(row.p[r], digits);
    live.querySelector(`tr[data-rank="${r}"] .ffn-knockout__bar`).style.width =
      `${100 * row.p[r]}%`;
  });
}

// ---- the overview: for each kind, a bar per layer, the probability of the clean run's first
// token with that layer zeroed (out of 100%); the dashed line is the clean run's, the chosen
// layer's bar in the link colour

function drawOverview(live, data, prompt, kind, layer) {
  const svg = live.querySelector(".ffn-knockout__overview");
  const clean = knockoutRow(data, prompt, "none", null);
  const step = (CHART.width - CHART.left - CHART.right) / data.n_layers;
  const parts = [];
  Object.entries(data.kinds).forEach(([k, label], n) => {
    const base = CHART.top + n * (CHART.row + CHART.gap) + CHART.row;  // the row's zero line
    const y = p => base - p * CHART.row;
    parts.push(`<text x="0" y="${base - CHART.row / 2}" dominant-baseline="middle">${
      escape(label)}</text>`);
    layerProfile(data, prompt, k).forEach((p, i) => {
      const chosen = k === kind && BigInt(i) === layer;
      if (chosen) {  // under the bar, seen even when the bar is near zero
        parts.push(`<rect class="ffn-knockout__mark" x="${CHART.left + i * step}" y="${
          base + 2}" width="${step}" height="4"></rect>`);
      }
      parts.push(`<rect class="ffn-knockout__layer${chosen ? " ffn-knockout__layer--chosen"
        : ""}" data-kind="${k}" data-layer="${i}" x="${CHART.left + i * step + 0.5}" y="${
        y(p)}" width="${step - 1}" height="${base - y(p)}"></rect>`);
    });
    parts.push(`<line class="ffn-knockout__clean" x1="${CHART.left}" x2="${
      CHART.width - CHART.right}" y1="${y(clean.p[0])}" y2="${y(clean.p[0])}"></line>`);
  });
  const bottom = CHART.top + 2 * CHART.row + CHART.gap + 18;
  parts.push(`<text x="${CHART.left}" y="${bottom}">layer 0</text>`,
             `<text x="${CHART.width - CHART.right}" y="${bottom}" text-anchor="end">layer ${
               data.n_layers - 1}</text>`);
  svg.innerHTML = `<title>${escape(describe(data, prompt))}</title>${parts.join("")}`;
  svg.setAttribute("aria-label", describe(data, prompt));
  // What the chart shows, in sight (screen readers have the chart's label, which says it all).
  live.querySelector("[data-legend]").textContent = `P(${tokenLabel(clean.texts[0])}) with `
    + "each layer zeroed, by kind; the dashed line: nothing zeroed.";
}

// ---- describe: the overview, for screen readers

function describe(data, prompt) {
  const clean = knockoutRow(data, prompt, "none", null);
  const watched = `P(${tokenLabel(clean.texts[0])})`;
  return `Bar chart of ${watched} with each layer zeroed, one row of ${data.n_layers} bars `
    + `per kind (${Object.values(data.kinds).join(", ")}), layer 0 on the left; the dashed `
    + `line is ${percentText(clean.p[0], BigInt(data.digits))}, with nothing zeroed.`;
}
