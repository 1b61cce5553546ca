// The activation explorer (GELU): x on a slider; ReLU, exact and tanh GELU, SiLU and squared
// ReLU, their derivatives and their gates g (f(x) = x g(x)) at x, and two plots, the curves and
// the gates, in the figures' colours (the widget's data: widgets/activations/data.py). The
// numbers come from ./lab.js, held to ffn in tests/test_widgets.py; the page against ffn in
// tests/browser/test_widgets.py. `mount` wires the steps below: build the controls, read them,
// compute, draw, describe.
import * as lab from "./lab.js";
import {formatFixed} from "../_shared/format.js";
import {fragment, loadD3, uid} from "../_shared/dom.js";

// The two plots: the curves f(x), and the gates g(x) on [-0.1, 1.1] (squared ReLU's gate,
// max(x, 0), leaves it at x = 1.1: it is no probability).
const CURVES = {x0: -4, x1: 4, y0: -1, y1: 4, width: 360, height: 260, pad: 30, yTicks: 5};
const GATES = {x0: -4, x1: 4, y0: -0.1, y1: 1.1, width: 360, height: 260, pad: 30, yTicks: 3};
const SAMPLES = 401;  // points per curve: 0.02 apart in x, finer than a pixel of the plot
const COLOR = /^#[0-9a-f]{6}$/i;

// ---- draw: one plot's curves, the axes through zero, the x marker and a dot per curve at x

function draw(d3, svg, plotBox, names, functionOf, colors) {
  const sx = d3.scaleLinear([plotBox.x0, plotBox.x1], [plotBox.pad, plotBox.width - plotBox.pad]);
  const sy = d3.scaleLinear([plotBox.y0, plotBox.y1], [plotBox.height - plotBox.pad, plotBox.pad]);
  const plot = d3.select(svg);
  plot.append("g").attr("class", "ffn-plot__axes")
    .attr("transform", `translate(0,${sy(0)})`)
    .call(d3.axisBottom(sx).ticks(8).tickSizeOuter(0));
  plot.append("g").attr("class", "ffn-plot__axes")
    .attr("transform", `translate(${sx(0)},0)`)
    .call(d3.axisLeft(sy).ticks(plotBox.yTicks).tickSizeOuter(0)
      .tickFormat(t => (t === 0 ? "" : d3.format("")(t))));  // one 0, on the x axis
  const clipId = `${svg.id}-clip`;  // the curves stop at the plot's edges
  plot.append("clipPath").attr("id", clipId).append("rect")
    .attr("x", sx(plotBox.x0)).attr("y", sy(plotBox.y1))
    .attr("width", sx(plotBox.x1) - sx(plotBox.x0)).attr("height", sy(plotBox.y0) - sy(plotBox.y1));
  const curves = plot.append("g").attr("clip-path", `url(#${clipId})`);
  const xs = d3.range(SAMPLES).map(i => plotBox.x0 + (plotBox.x1 - plotBox.x0) * i / (SAMPLES - 1));
  const span = plotBox.y1 - plotBox.y0;  // off the plot: clipped
  const clamp = y => Math.min(Math.max(y, plotBox.y0 - span), plotBox.y1 + span);
  const dots = {};
  for (const name of names) {
    const f = functionOf(name);
    paint(curves.append("path").attr("class", `ffn-curve ffn-curve--${name}`)
      .attr("d", d3.line(x => sx(x), x => sy(clamp(f(x))))(xs)), colors, name);
    dots[name] = paint(curves.append("circle").attr("class", "ffn-dot").attr("r", 3.5),
                       colors, name);
  }
  const marker = plot.append("line").attr("class", "ffn-plot__marker")
    .attr("y1", sy(plotBox.y0)).attr("y2", sy(plotBox.y1));
  return x => {  // moves the marker and the dots to x (kept inside the plot)
    const inside = Math.min(Math.max(x, plotBox.x0), plotBox.x1);
    marker.attr("x1", sx(inside)).attr("x2", sx(inside));
    for (const name of names) {
      const y = functionOf(name)(x);
      dots[name].attr("cx", sx(inside)).attr("cy", sy(clamp(y)))
        .attr("visibility", x === inside && Number.isFinite(y) ? "visible" : "hidden");
    }
  };
}

/** The figures' colour of `name` in both schemes, as CSS custom properties (extra.css). */
function paint(selection, colors, name) {
  return selection.style("--ffn-light", colors.light[name]).style("--ffn-dark", colors.dark[name]);
}

export async function mount(root) {
  const d3 = await loadD3();
  const colors = readColors(root);
  const id = uid("activations");
  const names = Object.keys(lab.ACTIVATIONS);
  root.append(fragment(controls(id, names, colors)));
  const slider = root.querySelector('input[name="x"]');
  const number = root.querySelector('input[name="xNumber"]');
  const note = root.querySelector("[data-note]");
  const moves = [
    draw(d3, root.querySelector("svg[data-plot='curves']"), CURVES, names,
         name => lab.ACTIVATIONS[name][1], colors),
    draw(d3, root.querySelector("svg[data-plot='gates']"), GATES, names,
         name => lab.ACTIVATIONS[name][3], colors),
  ];
  let shownX = null;
  const show = x => {
    shownX = x;
    note.textContent = "";
    for (const [name, text] of Object.entries(values(x, names))) {
      root.querySelector(`[data-result="${name}"]`).value = text;
    }
    for (const move of moves) move(x);
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

/** The curves' colours from the widget's data: {light: {name: "#rrggbb"}, dark: {...}}. */
function readColors(root) {
  const {colors} = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  for (const scheme of ["light", "dark"]) {
    for (const name of Object.keys(lab.ACTIVATIONS)) {
      if (!COLOR.test(colors?.[scheme]?.[name] ?? "")) {
        throw new TypeError(`the explorer's data has no ${scheme} colour for ${name}`);
      }
    }
  }
  return colors;
}

// ---- build the controls: x's slider and field, a row per activation, the two plots

function controls(id, names, colors) {
  const rows = names.map(name => {
    const [label, , , , gateName] = lab.ACTIVATIONS[name];
    const swatch = `<span class="ffn-swatch ffn-curve--${name}" style="--ffn-light: `
      + `${colors.light[name]}; --ffn-dark: ${colors.dark[name]}"></span>`;
    return `<tr><th scope="row">${swatch}${label}<span class="ffn-activations__gate"
        data-gate-name="${name}">gate ${gateName}</span></th>
      <td><output data-result="${name}" aria-label="${label} at x"></output></td>
      <td><output data-result="${name}Grad" aria-label="derivative of ${label} at x"></output>
      </td>
      <td><output data-result="${name}Gate" aria-label="gate of ${label} at x"></output></td>
      </tr>`;
  }).join("");
  const plot = (name, width, height, title) => `
      <figure class="ffn-activations__plot">
        <svg class="ffn-plot" id="${id}-${name}" data-plot="${name}"
          viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-${name}-title">
          <title id="${id}-${name}-title">${title}</title>
        </svg>
        <figcaption aria-hidden="true">${name === "curves" ? "the activation f(x)"
          : "its gate g(x), with f(x) = x g(x)"}</figcaption>
      </figure>`;
  return `
    <div class="ffn-widget__live ffn-activations" role="group" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Activation explorer</strong>: move
        x; each activation, its derivative and its gate at x are recomputed.</p>
      <div class="ffn-field ffn-field--wide"><label for="${id}-slider">x</label>
        <input id="${id}-slider" type="range" name="x" min="-4" max="4" step="0.01" value="1">
        <label class="ffn-visually-hidden" for="${id}-number">x, typed</label>
        <input id="${id}-number" type="number" name="xNumber" min="-8" max="8" step="0.01"
          value="1"></div>
      <p class="ffn-widget__note" data-note aria-live="polite"></p>
      <div class="ffn-activations__plots">
        ${plot("curves", CURVES.width, CURVES.height, "ReLU, exact and tanh GELU, SiLU and "
               + "squared ReLU for x from −4 to 4, with a vertical line at the chosen x")}
        ${plot("gates", GATES.width, GATES.height, "Their gates for x from −4 to 4: the step "
               + "of ReLU, Φ(x) of GELU, σ(x) of SiLU, all rising from 0 to 1; max(x, 0) of "
               + "squared ReLU, which keeps rising")}
      </div>
      <div class="ffn-table"><table class="ffn-activations__table" aria-live="polite">
        <thead><tr><th scope="col">activation</th><th scope="col">f(x)</th>
          <th scope="col">f′(x)</th><th scope="col">g(x)</th></tr></thead>
        <tbody>${rows}
          <tr><th scope="row">GELU exact − tanh</th>
            <td><output data-result="gap" aria-label="exact minus tanh GELU at x">
            </output></td><td></td><td></td></tr>
        </tbody></table></div>
    </div>`;
}

// ---- read them: the typed x, or null for none from -8 to 8

function readX(typed) {
  const x = Number(typed);
  return typed.trim() === "" || !Number.isFinite(x) || x < -8 || x > 8 ? null : x;
}

// ---- compute: each activation, its derivative and its gate at x, and the GELU gap, as shown

function values(x, names) {
  const shown = {};
  for (const name of names) {
    const [, f, df, g] = lab.ACTIVATIONS[name];
    shown[name] = formatFixed(f(x), 6);
    shown[`${name}Grad`] = formatFixed(df(x), 6);
    shown[`${name}Gate`] = formatFixed(g(x), 6);
  }
  shown.gap = formatFixed(lab.gelu(x) - lab.geluTanh(x), 8);
  return shown;
}

// ---- describe: why the values shown did not move

function stayed(shownX) {
  return "Type a number for x from −8 to 8; the values shown are for " +
    `x = ${String(shownX).replace("-", "\u2212")}.`;
}
