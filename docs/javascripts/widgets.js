// The FFN lab's widgets: controls mounted in each <div class="ffn-widget" data-widget="...">
// that hooks/widgets.py filled with a table of ffn's numbers (ffn_docs/widgets.py). Loaded
// only on pages with a widget (overrides/main.html). Every number shown comes from
// ffn-lab.js, whose functions tests/test_widgets.py holds to ffn; tests/browser/test_widgets.py
// moves each control and compares the page with ffn. Without JavaScript the table stays.
import * as lab from "./ffn-lab.js";

let unique = 0;
const uid = name => `ffn-${name}-${++unique}`;

/** An element from an HTML string (the markup below is ours, with no reader text in it). */
function fragment(markup) {
  const template = document.createElement("template");
  template.innerHTML = markup.trim();
  return template.content;
}

function escape(text) {
  return String(text).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                 '"': "&quot;"})[c]);
}

// ---- Model sizer (Parameters and FLOPs) ----

function mountSizer(root) {
  const {models} = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  const id = uid("sizer");
  const field = (name, label, attrs) =>
    `<div class="ffn-field"><label for="${id}-${name}">${label}</label>` +
    `<input id="${id}-${name}" name="${name}" type="number" ${attrs}></div>`;
  const check = (name, label) =>
    `<div class="ffn-field ffn-field--check"><input id="${id}-${name}" name="${name}" ` +
    `type="checkbox"><label for="${id}-${name}">${label}</label></div>`;
  const result = (name, label) =>
    `<div class="ffn-result" data-row="${name}"><dt id="${id}-${name}-label">${label}</dt>` +
    `<dd><output data-result="${name}" ` +
    `aria-labelledby="${id}-${name}-label"></output></dd></div>`;
  root.append(fragment(`
    <form class="ffn-widget__live ffn-sizer" aria-labelledby="${id}-title">
      <p class="ffn-widget__title" id="${id}-title"><strong>Model sizer</strong>: pick a model
        or change its dimensions; the numbers below are recomputed as you type.</p>
      <div class="ffn-field ffn-field--wide"><label for="${id}-preset">Model</label>
        <select id="${id}-preset" name="preset">${models.map((m, i) =>
          `<option value="${i}">${escape(m.name)}</option>`).join("")}</select></div>
      ${field("dModel", "d_model", 'min="1" step="1" required')}
      ${field("nLayers", "Layers", 'min="1" step="1" required')}
      <fieldset class="ffn-field ffn-field--wide"><legend>Hidden width</legend>
        <div class="ffn-field--check"><input id="${id}-given" type="radio" name="width"
          value="given"><label for="${id}-given">d_ff as given</label></div>
        <div class="ffn-field--check"><input id="${id}-rule" type="radio" name="width"
          value="rule"><label for="${id}-rule">LLaMA's rule: 8/3 d_model, times the
          multiplier, rounded up to a multiple</label></div>
      </fieldset>
      ${field("dFf", "d_ff", 'min="1" step="1"')}
      ${field("multiplier", "Multiplier (empty: none)", 'min="0" step="any"')}
      ${field("multipleOf", "multiple_of", 'min="1" step="1"')}
      ${check("gated", "Gated (three matrices, SwiGLU)")}
      ${check("bias", "Biases")}
      ${field("nExperts", "Experts (1: one FFN, no router)", 'min="1" step="1" required')}
      ${field("topK", "Experts per token (top-k)", 'min="1" step="1" required')}
      <div class="ffn-field"><label for="${id}-bytes">Bytes per weight</label>
        <select id="${id}-bytes" name="bytes"><option value="1">1 (8-bit)</option>
          <option value="2" selected>2 (bfloat16)</option>
          <option value="4">4 (float32)</option></select></div>
      <p class="ffn-widget__note" data-note aria-live="polite"></p>
      <dl class="ffn-results" aria-live="polite">
        ${result("dFfShown", "Hidden width d_ff, as used")}
        ${result("perLayer", "FFN parameters per layer")}
        ${result("perLayerActive", "… of which one token uses")}
        ${result("share", "FFN share of the layer (FFN / (FFN + attention))")}
        ${result("total", "FFN parameters, whole model")}
        ${result("totalActive", "… of which one token uses")}
        ${result("flops", "FFN FLOPs per token, forward")}
        ${result("flopsTraining", "FFN FLOPs per token, forward + backward")}
        ${result("bytes", "FFN bytes read per token at decode (batch 1)")}
        ${result("gigabytes", "… in GB")}
      </dl>
    </form>`));
  const form = root.querySelector("form");
  const input = name => form.elements.namedItem(name);
  const out = name => form.querySelector(`[data-result="${name}"]`);
  const note = form.querySelector("[data-note]");
  let preset = models[0];

  const fill = m => {
    preset = m;
    input("dModel").value = m.dModel;
    input("nLayers").value = m.nLayers;
    form.querySelector(`input[name="width"][value="${m.dFf === null ? "rule" : "given"}"]`)
      .checked = true;
    input("dFf").value = m.dFf ?? lab.resolvedDff(lab.modelDims(m)).toString();
    input("multiplier").value = m.ffnDimMultiplier ?? "";
    input("multipleOf").value = m.multipleOf;
    input("gated").checked = m.gated;
    input("bias").checked = m.bias;
    input("nExperts").value = m.nExperts ?? 1;
    input("topK").value = m.topK ?? 1;
  };

  const integer = name => {
    const text = input(name).value.trim();
    return /^\d+$/.test(text) ? BigInt(text) : null;
  };

  const update = () => {
    const rule = form.querySelector('input[name="width"][value="rule"]').checked;
    input("dFf").disabled = rule;
    input("multiplier").disabled = input("multipleOf").disabled = !rule;
    const experts = integer("nExperts");
    const moe = experts === null || experts > 1n;
    input("topK").disabled = !moe;
    const multiplierText = input("multiplier").value.trim();
    const m = lab.modelDims({
      ...preset,
      dModel: integer("dModel") ?? 0, nLayers: integer("nLayers") ?? 0,
      dFf: rule ? null : (integer("dFf") ?? 0),
      multipleOf: integer("multipleOf") ?? 0,
      ffnDimMultiplier: multiplierText === "" ? null : Number(multiplierText),
      gated: input("gated").checked, bias: input("bias").checked,
      nExperts: moe ? (experts ?? 0) : null, topK: moe ? (integer("topK") ?? 0) : null,
    });
    if (!moe) {  // one FFN: no shared experts, no dense layers (ModelDims refuses them)
      m.sharedDff = 0n; m.sharedGate = false; m.denseLayers = 0n; m.denseDff = null;
    }
    const problem = lab.dimsProblem(m);
    for (const element of form.querySelectorAll("output")) element.value = "";
    if (problem) {
      note.textContent = `Not a model ffn would count: ${problem}.`;
      return;
    }
    const kept = [];
    if (preset.nAttention !== null) kept.push(`${preset.nAttention} attention sublayers`);
    if (preset.kvDim !== null) kept.push(`keys and values of width ${preset.kvDim}`);
    if (preset.attentionPerLayer !== null) kept.push("its latent attention");
    if (moe && preset.sharedDff) kept.push("its shared experts");
    if (moe && preset.denseLayers) kept.push(`its ${preset.denseLayers} dense layers`);
    note.textContent = kept.length ? `Kept from ${preset.name}: ${kept.join(", ")}.` : "";
    const bytes = BigInt(input("bytes").value);
    const size = lab.sizeModel(m, bytes);
    const shown = {
      dFfShown: size.dFf.toString(),
      perLayer: lab.formatInt(size.perLayer),
      perLayerActive: size.perLayerActive === null ? "" : lab.formatInt(size.perLayerActive),
      share: lab.formatFixed(size.share, 4),
      total: lab.formatInt(size.total),
      totalActive: size.totalActive === null ? "" : lab.formatInt(size.totalActive),
      flops: lab.formatInt(size.flops),
      flopsTraining: lab.formatInt(size.flopsTraining),
      bytes: typeof size.bytes === "bigint" ? lab.formatInt(size.bytes)
        : lab.formatFixed(size.bytes, 0, true),
      gigabytes: lab.formatFixed(Number(size.bytes) / 1e9, 3),
    };
    for (const [name, text] of Object.entries(shown)) {
      out(name).value = text;
      out(name).closest(".ffn-result").hidden = text === "";
    }
  };

  form.addEventListener("submit", event => event.preventDefault());
  input("preset").addEventListener("change", () => {
    fill(models[Number(input("preset").value)]);
    update();
  });
  form.addEventListener("input", event => event.target.name !== "preset" && update());
  form.addEventListener("change", event => event.target.name !== "preset" && update());
  fill(preset);
  update();
}

// ---- Activation explorer (GELU) ----

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

function mountActivations(root) {
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
      root.querySelector(`[data-result="${name}"]`).value = lab.formatFixed(f(x), 6);
      root.querySelector(`[data-result="${name}Grad"]`).value = lab.formatFixed(df(x), 6);
    }
    root.querySelector('[data-result="gap"]').value =
      lab.formatFixed(lab.gelu(x) - lab.geluTanh(x), 8);
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

const MOUNT = {sizer: mountSizer, activations: mountActivations};

// Each widget is mounted when it comes near the screen, not at load: a reader who never
// scrolls to it costs the page nothing (Lighthouse counted its layout as blocking time).
const observer = new IntersectionObserver(entries => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    observer.unobserve(entry.target);
    MOUNT[entry.target.dataset.widget](entry.target);
    entry.target.classList.add("ffn-widget--live");  // hides the table (extra.css), not in print
  }
}, {rootMargin: "600px 0px"});
for (const root of document.querySelectorAll(".ffn-widget[data-widget]")) {
  if (MOUNT[root.dataset.widget]) observer.observe(root);
}
