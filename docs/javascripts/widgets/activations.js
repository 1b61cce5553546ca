// The activation explorer (GELU): x on a slider; ReLU, exact and tanh GELU, SiLU and squared
// ReLU and their derivatives at x, and the curves (lab/activations.js, held to ffn in
// tests/test_widgets.py; the page against ffn in tests/browser/test_widgets.py).
import * as lab from "../lab/activations.js";
import {formatFixed} from "../lab/format.js";
import {fragment, uid} from "./dom.js";

const PLOT = {x0: -4, x1: 4, y0: -1, y1: 4, width: 560, height: 300, pad: 34};

function curvePath(f, sx, sy) {
  const points = [];
  for (let i = 0; i <= 400; i++) {
    const x = PLOT.x0 + (PLOT.x1 - PLOT.x0) * i / 400;
    const y = Math.min(Math.max(f(x), PLOT.y0 - 1), PLOT.y1 + 1);
    points.push(`${sx(x).toFixed(1)},${sy(y).toFixed(1)}`);
  }
  return "M" + points.join("L");
}

export function mount(root) {
  const id = uid("activations");
  const names = Object.keys(lab.ACTIVATIONS);
  const sx = x => PLOT.pad + (x - PLOT.x0) / (PLOT.x1 - PLOT.x0) * (PLOT.width - 2 * PLOT.pad);
  const sy = y => PLOT.height - PLOT.pad
    - (y - PLOT.y0) / (PLOT.y1 - PLOT.y0) * (PLOT.height - 2 * PLOT.pad);
  const ticks = [-4, -3, -2, -1, 0, 1, 2, 3, 4];
  const rows = names.map(name => {
    const [label] = lab.ACTIVATIONS[name];
    return `<tr><th scope="row"><span class="ffn-swatch ffn-curve--${name}"></span>${label}</th>
      <td><output data-result="${name}" aria-label="${label} at x"></output></td>
      <td><output data-result="${name}Grad" aria-label="derivative of ${label} at x"></output>
      </td></tr>`;
  }).join("");
  root.append(fragment(`
    <div class="ffn-widget__live ffn-activations" role="group" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Activation explorer</strong>: move
        x; each activation and its derivative at x are recomputed.</p>
      <div class="ffn-field ffn-field--wide"><label for="${id}-slider">x</label>
        <input id="${id}-slider" type="range" name="x" min="-4" max="4" step="0.01" value="1">
        <label class="ffn-visually-hidden" for="${id}-number">x, typed</label>
        <input id="${id}-number" type="number" name="xNumber" min="-8" max="8" step="0.01"
          value="1"></div>
      <div class="ffn-table"><table class="ffn-activations__table" aria-live="polite">
        <thead><tr><th scope="col">activation</th><th scope="col">f(x)</th>
          <th scope="col">f′(x)</th></tr></thead>
        <tbody>${rows}
          <tr><th scope="row">GELU exact − tanh</th>
            <td><output data-result="gap" aria-label="exact minus tanh GELU at x">
            </output></td><td></td></tr>
        </tbody></table></div>
      <svg class="ffn-plot" viewBox="0 0 ${PLOT.width} ${PLOT.height}" role="img"
        aria-labelledby="${id}-plot-title">
        <title id="${id}-plot-title">ReLU, exact and tanh GELU, SiLU and squared ReLU for x
          from −4 to 4, with a vertical line at the chosen x</title>
        <g class="ffn-plot__axes">
          <line x1="${sx(PLOT.x0)}" x2="${sx(PLOT.x1)}" y1="${sy(0)}" y2="${sy(0)}"></line>
          <line x1="${sx(0)}" x2="${sx(0)}" y1="${sy(PLOT.y0)}" y2="${sy(PLOT.y1)}"></line>
          ${ticks.map(t => `<text x="${sx(t)}" y="${sy(PLOT.y0) + 16}">${t}</text>`).join("")}
          ${[-1, 1, 2, 3, 4].map(t =>
            `<text x="${sx(0) - 8}" y="${sy(t) + 4}" text-anchor="end">${t}</text>`).join("")}
        </g>
        ${names.map(name => `<path class="ffn-curve ffn-curve--${name}"
          d="${curvePath(lab.ACTIVATIONS[name][1], sx, sy)}"></path>`).join("")}
        <line class="ffn-plot__marker" data-marker y1="${sy(PLOT.y0)}" y2="${sy(PLOT.y1)}">
        </line>
      </svg>
    </div>`));
  const slider = root.querySelector('input[name="x"]');
  const number = root.querySelector('input[name="xNumber"]');
  const marker = root.querySelector("[data-marker]");
  const show = x => {
    for (const name of names) {
      const [, f, df] = lab.ACTIVATIONS[name];
      root.querySelector(`[data-result="${name}"]`).value = formatFixed(f(x), 6);
      root.querySelector(`[data-result="${name}Grad"]`).value = formatFixed(df(x), 6);
    }
    root.querySelector('[data-result="gap"]').value =
      formatFixed(lab.gelu(x) - lab.geluTanh(x), 8);
    const shownX = Math.min(Math.max(x, PLOT.x0), PLOT.x1);
    marker.setAttribute("x1", sx(shownX));
    marker.setAttribute("x2", sx(shownX));
  };
  slider.addEventListener("input", () => {
    number.value = slider.value;
    show(Number(slider.value));
  });
  number.addEventListener("input", () => {
    const x = Number(number.value);
    if (number.value.trim() === "" || !Number.isFinite(x)) return;
    slider.value = String(x);
    show(x);
  });
  show(Number(slider.value));
}
