// The activation explorer (GELU): x on a slider; ReLU, exact and tanh GELU, SiLU and squared
// ReLU and their derivatives at x, and the curves (./lab.js, held to ffn in
// tests/test_widgets.py; the page against ffn in tests/browser/test_widgets.py). `mount` wires
// the steps below: build the controls, read them, compute, draw, describe.
import * as lab from "./lab.js";
import {formatFixed} from "../_shared/format.js";
import {fragment, loadD3, uid} from "../_shared/dom.js";

const PLOT = {x0: -4, x1: 4, y0: -1, y1: 4, width: 560, height: 300, pad: 34};
const SAMPLES = 401;  // points per curve: 0.02 apart in x, finer than a pixel of the plot

// ---- draw: the curves, the axes through zero and the x marker, by d3 in the empty <svg>

function draw(d3, svg, names) {
  const sx = d3.scaleLinear([PLOT.x0, PLOT.x1], [PLOT.pad, PLOT.width - PLOT.pad]);
  const sy = d3.scaleLinear([PLOT.y0, PLOT.y1], [PLOT.height - PLOT.pad, PLOT.pad]);
  const plot = d3.select(svg);
  plot.append("g").attr("class", "ffn-plot__axes")
    .attr("transform", `translate(0,${sy(0)})`)
    .call(d3.axisBottom(sx).ticks(8).tickSizeOuter(0));
  plot.append("g").attr("class", "ffn-plot__axes")
    .attr("transform", `translate(${sx(0)},0)`)
    .call(d3.axisLeft(sy).ticks(5).tickSizeOuter(0)
      .tickFormat(t => (t === 0 ? "" : d3.format("")(t))));  // one 0, on the x axis
  const clipId = `${svg.id}-clip`;  // the curves stop at the plot's edges
  plot.append("clipPath").attr("id", clipId).append("rect")
    .attr("x", sx(PLOT.x0)).attr("y", sy(PLOT.y1))
    .attr("width", sx(PLOT.x1) - sx(PLOT.x0)).attr("height", sy(PLOT.y0) - sy(PLOT.y1));
  const curves = plot.append("g").attr("clip-path", `url(#${clipId})`);
  const xs = d3.range(SAMPLES).map(i => PLOT.x0 + (PLOT.x1 - PLOT.x0) * i / (SAMPLES - 1));
  const clamp = y => Math.min(Math.max(y, PLOT.y0 - 1), PLOT.y1 + 1);  // off the plot: clipped
  for (const name of names) {
    const f = lab.ACTIVATIONS[name][1];
    curves.append("path").attr("class", `ffn-curve ffn-curve--${name}`)
      .attr("d", d3.line(x => sx(x), x => sy(clamp(f(x))))(xs));
  }
  const marker = plot.append("line").attr("class", "ffn-plot__marker")
    .attr("y1", sy(PLOT.y0)).attr("y2", sy(PLOT.y1));
  return x => {  // moves the marker to x (kept inside the plot)
    const shown = sx(Math.min(Math.max(x, PLOT.x0), PLOT.x1));
    marker.attr("x1", shown).attr("x2", shown);
  };
}

export async function mount(root) {
  const d3 = await loadD3();
  const id = uid("activations");
  const names = Object.keys(lab.ACTIVATIONS);
  root.append(fragment(controls(id, names)));
  const slider = root.querySelector('input[name="x"]');
  const number = root.querySelector('input[name="xNumber"]');
  const note = root.querySelector("[data-note]");
  const moveMarker = draw(d3, root.querySelector("svg.ffn-plot"), names);
  let shownX = null;
  const show = x => {
    shownX = x;
    note.textContent = "";
    for (const [name, text] of Object.entries(values(x, names))) {
      root.querySelector(`[data-result="${name}"]`).value = text;
    }
    moveMarker(x);
  };
  slider.addEventListener("input", () => {
    number.value = slider.value;
    show(Number(slider.value));
  });
  number.addEventListener("input", () => {
    const x = readX(number.value);
    if (x === null) {  // the last x stays shown, and the note says so
      note.textContent = stayed(shownX);
      return;
    }
    slider.value = String(x);
    show(x);
  });
  show(Number(slider.value));
}

// ---- build the controls: x's slider and field, a row per activation, the plot

function controls(id, names) {
  const rows = names.map(name => {
    const [label] = lab.ACTIVATIONS[name];
    return `<tr><th scope="row"><span class="ffn-swatch ffn-curve--${name}"></span>${label}</th>
      <td><output data-result="${name}" aria-label="${label} at x"></output></td>
      <td><output data-result="${name}Grad" aria-label="derivative of ${label} at x"></output>
      </td></tr>`;
  }).join("");
  return `
    <div class="ffn-widget__live ffn-activations" role="group" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Activation explorer</strong>: move
        x; each activation and its derivative at x are recomputed.</p>
      <div class="ffn-field ffn-field--wide"><label for="${id}-slider">x</label>
        <input id="${id}-slider" type="range" name="x" min="-4" max="4" step="0.01" value="1">
        <label class="ffn-visually-hidden" for="${id}-number">x, typed</label>
        <input id="${id}-number" type="number" name="xNumber" min="-8" max="8" step="0.01"
          value="1"></div>
      <p class="ffn-widget__note" data-note aria-live="polite"></p>
      <div class="ffn-table"><table class="ffn-activations__table" aria-live="polite">
        <thead><tr><th scope="col">activation</th><th scope="col">f(x)</th>
          <th scope="col">f′(x)</th></tr></thead>
        <tbody>${rows}
          <tr><th scope="row">GELU exact − tanh</th>
            <td><output data-result="gap" aria-label="exact minus tanh GELU at x">
            </output></td><td></td></tr>
        </tbody></table></div>
      <svg class="ffn-plot" id="${id}-plot" viewBox="0 0 ${PLOT.width} ${PLOT.height}" role="img"
        aria-labelledby="${id}-plot-title">
        <title id="${id}-plot-title">ReLU, exact and tanh GELU, SiLU and squared ReLU for x
          from −4 to 4, with a vertical line at the chosen x</title>
      </svg>
    </div>`;
}

// ---- read them: the typed x, or null for none from -8 to 8

function readX(typed) {
  const x = Number(typed);
  return typed.trim() === "" || !Number.isFinite(x) || x < -8 || x > 8 ? null : x;
}

// ---- compute: each activation and its derivative at x, and the GELU gap, as shown

function values(x, names) {
  const shown = {};
  for (const name of names) {
    const [, f, df] = lab.ACTIVATIONS[name];
    shown[name] = formatFixed(f(x), 6);
    shown[`${name}Grad`] = formatFixed(df(x), 6);
  }
  shown.gap = formatFixed(lab.gelu(x) - lab.geluTanh(x), 8);
  return shown;
}

// ---- describe: why the values shown did not move

function stayed(shownX) {
  return "Type a number for x from −8 to 8; the values shown are for " +
    `x = ${String(shownX).replace("-", "\u2212")}.`;
}
