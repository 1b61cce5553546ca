// The model sizer (Parameters and FLOPs): a model of ffn.models or dimensions typed in; its
// FFN's parameters, share, FLOPs and bytes in the chosen weight format follow (./lab.js, held
// to ffn in tests/test_widgets.py; the page against ffn in tests/browser/test_widgets.py).
// `mount` wires the steps below: build the controls, read them, draw (the strings computed by
// lab.sizerNumbers), describe.
import * as lab from "./lab.js";
import {readInteger} from "../_shared/read.js";
import {escape, fragment, uid} from "../_shared/dom.js";
import {formatInt} from "../_shared/format.js";

// The presets' integers, JSON numbers (all below 2**53: data.py), as BigInt, in the model
// and its parts alike; ffn_dim_multiplier is the one field that is a float.
const presetDims = m => Object.fromEntries(Object.entries(m).map(([k, v]) =>
  [k, typeof v === "number" && k !== "ffnDimMultiplier" ? BigInt(v)
    : v !== null && typeof v === "object" ? presetDims(v) : v]));

export function mount(root) {
  const data = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  const models = data.models.map(presetDims);
  root.append(fragment(controls(uid("sizer"), models, data.formats, data.parts,
                                data.partColors)));
  const form = root.querySelector("form");
  input(form, "bytes").value = data.format;
  let preset = models[0];
  const update = () => {
    const m = show(form, preset);
    showParts(form, m);
  };
  form.addEventListener("submit", event => event.preventDefault());
  input(form, "preset").addEventListener("change", () => {
    preset = models[Number(input(form, "preset").value)];
    fill(form, preset);
    update();
  });
  form.addEventListener("input", event => event.target.name !== "preset" && update());
  form.addEventListener("change", event => event.target.name !== "preset" && update());
  fill(form, preset);
  update();
}

// ---- build the controls: the markup of the form, its fields and its results

function controls(id, models, formats, parts, colors) {
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
  return `
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
      <div class="ffn-field ffn-field--wide"><label for="${id}-bytes">Bytes per weight</label>
        <select id="${id}-bytes" name="bytes">${formats.map(f =>
          `<option value="${escape(f.name)}">${escape(f.label)}</option>`).join("")}
          </select></div>
      <div class="ffn-field ffn-field--wide"><label for="${id}-expertBytes">Format of the
        routed experts' weights (DeepSeek-V4 ships them in 4 bits)</label>
        <select id="${id}-expertBytes" name="expertBytes"><option value="">as the other
          weights</option>${formats.map(f =>
          `<option value="${escape(f.name)}">${escape(f.label)}</option>`).join("")}
          </select></div>
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
      ${partsMarkup(id, parts, colors)}
    </form>`;
}

/** "Where the parameters go": a stacked bar and a table, one row per part (data.py's PARTS),
 * each in its colour (palette.py's PART_COLORS, as CSS custom properties). */
function partsMarkup(id, parts, colors) {
  const color = key => {
    for (const scheme of ["light", "dark"]) {
      if (!/^#[0-9a-f]{6}$/i.test(colors?.[scheme]?.[key] ?? "")) {
        throw new TypeError(`the sizer's data has no ${scheme} colour for ${key}`);
      }
    }
    return `--ffn-light: ${colors.light[key]}; --ffn-dark: ${colors.dark[key]}`;
  };
  const rows = Object.entries(parts).map(([key, label]) =>
    `<tr data-part="${key}"><th scope="row" id="${id}-part-${key}"><span class="ffn-part-swatch `
    + `ffn-part--${key}" style="${color(key)}"></span>${escape(label)}</th>`
    + `<td><output data-part-count="${key}" aria-labelledby="${id}-part-${key}"></output></td>`
    + `<td><output data-part-share="${key}" aria-label="${escape(label)}, share of the total">`
    + "</output></td></tr>").join("");
  const segments = Object.keys(parts).map(key =>
    `<span class="ffn-part-segment ffn-part--${key}" data-segment="${key}" `
    + `style="${color(key)}"></span>`).join("");
  return `
      <section class="ffn-sizer__parts" aria-labelledby="${id}-parts-title">
        <p class="ffn-widget__title" id="${id}-parts-title"><strong>Where the parameters
          go</strong>: the whole model, <output data-part-count="total"></output> parameters</p>
        <p class="ffn-widget__note" data-parts-note aria-live="polite"></p>
        <div class="ffn-sizer__bar" aria-hidden="true">${segments}</div>
        <div class="ffn-table"><table class="ffn-sizer__parts-table">
          <thead><tr><th scope="col">part</th><th scope="col">parameters</th>
            <th scope="col">share</th></tr></thead>
          <tbody>${rows}
            <tr data-part="active"><th scope="row" id="${id}-part-active">One token uses</th>
              <td><output data-part-count="active" aria-labelledby="${id}-part-active">
              </output></td><td><output data-part-share="active"
              aria-label="one token uses, share of the total"></output></td></tr>
          </tbody></table></div>
      </section>`;
}

const input = (form, name) => form.elements.namedItem(name);

/** The fields set to a preset's dimensions. */
function fill(form, m) {
  input(form, "dModel").value = m.dModel;
  input(form, "nLayers").value = m.nLayers;
  const rule = typeof m.dFf === "object";  // a LlamaWidth: the rule's arguments
  form.querySelector(`input[name="width"][value="${rule ? "rule" : "given"}"]`).checked = true;
  input(form, "dFf").value = lab.resolvedDff(lab.modelDims(m)).toString();
  input(form, "multiplier").value = rule ? m.dFf.ffnDimMultiplier ?? "" : "";
  input(form, "multipleOf").value = rule ? m.dFf.multipleOf : 256n;
  input(form, "gated").checked = m.gated;
  input(form, "bias").checked = m.bias;
  input(form, "nExperts").value = m.moe?.nExperts ?? 1;
  input(form, "topK").value = m.moe?.topK ?? 1;
  // the format the release stores its routed experts in (DeepSeek-V4: 4 bits); "": as the rest
  input(form, "expertBytes").value = m.moe?.expertFormat ?? "";
}

// ---- read them: the fields as ffn.ModelDims would take them

// A number field's text as an exact integer (BigInt): "4096", "1e3" (1000), "2.0", "-5"
// (which ffn's check then refuses by name), however many digits; a TypeError for an empty
// field or a fraction. A number field's value is "" for text it cannot read, such as a number
// beyond the doubles (1.8e308): that limit is the field's, and the message says so.
function integer(form, name, ffnName) {
  const field = input(form, name);
  const text = field.value.trim();
  const whole = readInteger(text);
  if (whole === null) {
    throw new TypeError(`${ffnName} must be a whole number, got `
                        + (field.validity.badInput ? "text a number field cannot read (it "
                           + "holds numbers up to 1.8e308)"
                           : text === "" ? "nothing" : `"${text}"`));
  }
  return whole;
}

function experts(form) {
  try {
    return integer(form, "nExperts", "n_experts");
  } catch {
    return null;
  }
}

// The dimensions in the fields, over the preset's (its attention and shared experts), as
// ffn.ModelDims would take them; a TypeError for a field that holds no whole number.
function typedDims(form, preset, rule) {
  const moe = experts(form) !== 1n;  // 1: one FFN, no router; 0 or none: refused by ffn's check
  const multiplierText = input(form, "multiplier").value.trim();
  if (rule && input(form, "multiplier").validity.badInput) {  // "1e400", "1.3e": value ""
    throw new TypeError("ffn_dim_multiplier must be a number, got nothing readable");
  }
  // one FFN: no MoE part (no shared experts, no dense layers); else the preset's, if any
  const kept = preset.moe ?? {shared: null, routerBias: false, dense: null};
  return {
    ...preset,
    dModel: integer(form, "dModel", "d_model"), nLayers: integer(form, "nLayers", "n_layers"),
    dFf: rule ? {
      multipleOf: integer(form, "multipleOf", "multiple_of"),
      ffnDimMultiplier: multiplierText !== "" ? Number(multiplierText) : null,
    } : integer(form, "dFf", "d_ff"),
    gated: input(form, "gated").checked, bias: input(form, "bias").checked,
    moe: moe ? {...kept, nExperts: integer(form, "nExperts", "n_experts"),
                topK: integer(form, "topK", "top_k")} : null,
  };
}

// ---- draw: every change shows the fields' numbers, or names the refusal and shows none

// First the old numbers go (none may stay beside other inputs), then the fields are read and
// checked as ffn checks them; a refusal is named in the note and no number is shown.
function show(form, preset) {
  const note = form.querySelector("[data-note]");
  for (const element of form.querySelectorAll("output")) element.value = "";
  note.textContent = "";
  const rule = form.querySelector('input[name="width"][value="rule"]').checked;
  input(form, "dFf").disabled = rule;
  input(form, "multiplier").disabled = input(form, "multipleOf").disabled = !rule;
  input(form, "topK").disabled = experts(form) === 1n;
  let m, shown;
  try {
    m = lab.modelDims(typedDims(form, preset, rule));
    const expertBytes = input(form, "expertBytes").value || null;  // "": as the others
    shown = lab.sizerNumbers(m, input(form, "bytes").value, expertBytes);  // formats' names
  } catch (error) {
    if (rule) input(form, "dFf").value = "";  // the rule's width: none for refused dimensions
    note.textContent = `Not a model ffn would count: ${error.message}.`;
    if (error instanceof TypeError || error instanceof RangeError) return null;
    throw error;
  }
  if (rule) input(form, "dFf").value = shown.dFf;  // the width the rule gives the fields
  note.textContent = keptNote(preset, m.moe !== null);
  for (const [name, text] of Object.entries(shown)) {
    const out = form.querySelector(`[data-result="${name === "dFf" ? "dFfShown" : name}"]`);
    out.value = text;
    out.closest(".ffn-result").hidden = text === "";
  }
  return m;
}

// The breakdown of checked dimensions `m` (null: refused, then none is shown): each part's
// count and share (lab.breakdownNumbers), its row and segment hidden when it is 0.
function showParts(form, m) {
  const section = form.querySelector(".ffn-sizer__parts");
  const note = section.querySelector("[data-parts-note]");
  for (const element of section.querySelectorAll("output")) element.value = "";
  const shown = m === null ? null : lab.breakdownNumbers(m);
  section.querySelector(".ffn-sizer__bar").hidden = shown === null;
  section.querySelector("table").hidden = shown === null;
  if (shown === null) {
    note.textContent = m === null ? "" : `${m.name} has no vocabulary size in ffn.models, `
      + "so ffn counts no whole model: no embeddings, head or norms to show.";
    return;
  }
  note.textContent = m.tiedHead ? "The output head reuses the embedding matrix (tied), so it "
    + "adds no parameters." : "";
  section.querySelector('[data-part-count="total"]').value = shown.total;
  const counts = Object.fromEntries(lab.breakdown(m));
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0n);
  for (const row of section.querySelectorAll("tr[data-part]")) {
    const key = row.dataset.part;
    row.querySelector(`[data-part-count="${key}"]`).value = shown[key];
    row.querySelector(`[data-part-share="${key}"]`).value = shown[`${key}Share`];
    row.hidden = key === "active" ? shown.active === "" : counts[key] === 0n;
  }
  for (const segment of section.querySelectorAll("[data-segment]")) {
    const n = counts[segment.dataset.segment];  // the bar's widths: drawing, not a number shown
    segment.style.flexGrow = String(lab.exactRatio(n, total));
    segment.hidden = n === 0n;
  }
}

// ---- describe: what the typed dimensions keep of the preset, in words

function keptNote(preset, moe) {
  const kept = [];
  if (preset.vocabSize !== null) {
    kept.push(`a vocabulary of ${formatInt(preset.vocabSize)} tokens`
              + (preset.nPositions ? ` and ${formatInt(preset.nPositions)} positions` : ""));
  }
  if (preset.other) kept.push(`${formatInt(preset.other)} parameters in no other part`);
  if (preset.nAttention !== null) kept.push(`${preset.nAttention} attention sublayers`);
  if (preset.kvDim !== null) kept.push(`keys and values of width ${preset.kvDim}`);
  if (preset.attentionPerLayer !== null) kept.push("its attention's own parameter count");
  if (preset.linearAttention !== null) {
    kept.push(`its ${preset.linearAttention.sublayers} linear-attention sublayers`);
  }
  const experts = moe ? preset.moe : null;  // what the typed experts keep of the preset's
  if (experts?.shared) kept.push("its shared experts");
  if (experts?.routerBias) kept.push("its router's bias");
  const dense = experts?.dense ?? null;
  if (dense !== null && dense.moeEvery > 1n) {
    kept.push(`a dense FFN of width ${dense.dFf} in every layer that is not one of `
              + `its MoE layers (one in every ${dense.moeEvery})`);
  } else if (dense !== null) {
    kept.push(`its ${dense.first} leading dense layer${dense.first > 1n ? "s" : ""}`);
  }
  return kept.length ? `Kept from ${preset.name}: ${kept.join(", ")}.` : "";
}
