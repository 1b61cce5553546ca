// The knock-out widget's arithmetic ("Knock out a layer", trained-ffn.md): choosing the row of
// the build's table (widgets/knockout/data.py, computed by ffn.smollm2) for a prompt and a
// knock-out, and printing it as data.py prints the fallback table: tokens quoted, probabilities
// as percentages (Python's f"{100 * p:.1f}%"), and the sentence that compares the row with the
// clean run. Pure functions, no DOM. tests/test_widget_knockout.py holds each to data.py's,
// in Node, on every row of the table and on hypothesis-generated inputs.
import {checkChoice, checkPositiveInt, describeValue} from "../_shared/check.js";
import {formatFixed} from "../_shared/format.js";

/** What a knock-out zeroes: nothing, one layer's FFN output, one layer's attention output. */
export const KNOCKOUT_KINDS = ["none", "ffn", "attn"];
const KIND_WORDS = {ffn: "FFN", attn: "attention"};

/** A token as the widget shows it: quoted, a leading space kept, a backslash, newline or tab
 * written \\, \n, \t (data.py's token_label). */
export function tokenLabel(text) {
  if (typeof text !== "string") {
    throw new TypeError(`text must be a str, got ${describeValue(text)}`);
  }
  return `"${text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\t/g, "\\t")}"`;
}

/** A probability as a percentage, Python's f"{100 * p:.{digits}f}%" (data.py's percent). */
export function percentText(p, digits = 1n) {
  if (typeof p !== "number") {
    throw new TypeError(`p must be a real number, got ${describeValue(p)}`);
  }
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be a probability in [0, 1], got ${p}`);
  checkPositiveInt(digits, "digits", true);
  return `${formatFixed(100 * p, digits)}%`;
}

/** The table's row for `prompt` (a prompt's name) and a knock-out: `kind` "none" (the clean
 * run; `layer` null) or "ffn" / "attn" with `layer` a BigInt from 0 to n_layers - 1.
 * Returns {texts, p, watch}: the top tokens, their probabilities, and the probability of the
 * clean run's first token. */
export function knockoutRow(table, prompt, kind, layer) {
  if (table === null || typeof table !== "object" || !Array.isArray(table.prompts)) {
    throw new TypeError(`table must be the widget's data, got ${describeValue(table)}`);
  }
  const names = table.prompts.map(e => e.name);
  const entry = table.prompts[names.indexOf(checkChoice(prompt, "prompt", names))];
  checkChoice(kind, "kind", KNOCKOUT_KINDS);
  if (kind === "none") {
    if (layer !== null) {
      throw new RangeError(`layer must be null when kind is "none", got ${describeValue(layer)}`);
    }
    return entry.clean;
  }
  checkPositiveInt(layer, "layer", true);
  const rows = entry[kind];
  if (layer >= BigInt(rows.length)) {
    throw new RangeError(`layer must be from 0 to ${rows.length - 1}, got ${layer}`);
  }
  return rows[Number(layer)];
}

/** What the chosen row does to the clean run's first token, in words (data.py's
 * change_sentence): 'With layer 3's FFN zeroed, P(" Paris") is 12.0% (77.3% with nothing
 * zeroed).' */
export function changeSentence(table, prompt, kind, layer) {
  const row = knockoutRow(table, prompt, kind, layer);
  const clean = knockoutRow(table, prompt, "none", null);
  const digits = BigInt(table.digits ?? 1);
  const watched = `P(${tokenLabel(clean.texts[0])})`;
  if (kind === "none") return `With nothing zeroed, ${watched} is ${percentText(clean.p[0], digits)}.`;
  return `With layer ${layer}'s ${KIND_WORDS[kind]} zeroed, ${watched} is `
    + `${percentText(row.watch, digits)} (${percentText(clean.p[0], digits)} with nothing zeroed).`;
}

/** For `prompt` and `kind` ("ffn" or "attn"), the probability of the clean run's first token
 * with each layer's output of that kind zeroed, layer 0 first: the widget's overview. */
export function layerProfile(table, prompt, kind) {
  checkChoice(kind, "kind", KNOCKOUT_KINDS.slice(1));
  knockoutRow(table, prompt, "none", null);  // checks the table and the prompt
  return table.prompts.find(e => e.name === prompt)[kind].map(r => r.watch);
}
