// The FFN lab's router (ffn/routing.py, route) for one token, float64, for the router
// explorer (How models build their experts). Pure functions, no DOM. tests/test_widget_router.py
// holds them to ffn's own ffn.routing.route on 1,000 hypothesis-generated inputs: the chosen
// experts equal, the scores and weights within the tolerance it states (Math.exp is V8's, not
// glibc's; numpy sums pairwise).

import {
  checkBoolean, checkChoice, checkReal, checkTopK, checkVector,
} from "../_shared/check.js";

// ffn.routing.SCORES, less DeepSeek-V4's "sqrtsoftplus" (not in this widget)
export const ROUTER_SCORES = ["softmax", "sigmoid"];
const TINY = 1e-280;  // a score this small may have lost bits to underflow (normal: 2.2e-308)

/** One token's logits, checked: a non-empty array of real numbers (NaN and infinities pass,
 * as in ffn's x). */
function checkLogits(logits) {
  const values = checkVector(logits, "logits");
  if (values.length === 0) {
    throw new RangeError("logits must hold one logit per expert, got none (no experts)");
  }
  return values;
}

function scoresOf(logits, score) {
  if (score === "softmax") {
    const top = Math.max(...logits);
    const e = logits.map(l => Math.exp(l - top));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map(v => v / total);
  }
  return logits.map(l => 1.0 / (1.0 + Math.exp(-l)));
}

/** The router's scores of one token's logits, as ffn computes them: softmax shifted by the
 * largest logit (exp cannot overflow), or 1 / (1 + exp(-logit)). */
export function routerScores(logits, score) {
  checkChoice(score, "score", ROUTER_SCORES);
  return scoresOf(checkLogits(logits), score);
}

/** The experts in order of their choice values, largest first; equal values: the lower index
 * first; NaN last (numpy's stable argsort of -value, as ffn sorts). */
export function rankExperts(values) {
  checkVector(values, "values");
  return values.map((_, i) => i).sort((a, b) => {
    const nanA = Number.isNaN(values[a]), nanB = Number.isNaN(values[b]);
    if (nanA || nanB) return nanA === nanB ? a - b : (nanA ? 1 : -1);
    return (values[b] > values[a]) - (values[b] < values[a]) || a - b;
  });
}

/** log of a score, up to a constant shared by the token's experts: the logit for softmax,
 * log sigmoid(l) = -log(1 + exp(-l)) for sigmoid, each without overflow. */
function logScore(l, score) {
  if (score === "softmax") return l;
  return l >= 0 ? -Math.log1p(Math.exp(-l)) : l - Math.log1p(Math.exp(l));
}

/** One token's route, as MixtureOfExperts.route (one group): `scores` p from the logits; the
 * `chosen` top-k experts by p + bias (the bias only chooses), largest first; their `weights`,
 * the unbiased p of the chosen divided by their sum (`normalize`), times `scale`. Also the
 * `choice` values p + bias (as the widget shows them). Without a bias the logits choose
 * (either score): the score keeps their order, its rounding may not (sigmoid: logits 40 and
 * 41 both give p = 1.0). Where a chosen score is so small it may have underflowed (logits
 * near -800), the renormalised weights are taken from the log-scores, exp(log p_i - max) /
 * sum, so that they are not 0 / 0. Arguments are checked as MixtureOfExperts checks them
 * (top_k a BigInt, a finite bias of one value an expert, a scale in (0, 1e6]). */
export function route(logits, topK, score = "softmax", bias = null, normalize = true,
                      scale = 1.0) {
  if (!Array.isArray(logits) || logits.length === 0) checkLogits(logits);  // refused
  const n = logits.length;
  checkTopK(topK, n);
  checkBoolean(normalize, "normalize");
  checkChoice(score, "score", ROUTER_SCORES);
  if (bias !== null) {
    bias = checkVector(bias, "bias", n, "(n_experts,)");
    if (!bias.every(Number.isFinite)) {
      throw new RangeError("bias must be finite: a NaN or infinite bias makes the choice "
                           + "meaningless");
    }
  }
  scale = checkReal(scale, "scale", 0, 1e6, false, true);
  logits = checkLogits(logits);
  const scores = scoresOf(logits, score);
  const choice = bias === null ? scores.slice() : scores.map((p, i) => p + bias[i]);
  // Without a bias the logits choose, as in ffn (logits + 0 * p: p's NaN kept): both scores
  // keep the logits' order, which their rounding may not (softmax: logits 1e-17 and 2e-17
  // beside 0.5 give one p; logits under the largest by 746 or more all give p = 0).
  const order = bias === null ? logits.map((l, i) => l + 0 * scores[i]) : choice;
  const chosen = rankExperts(order).slice(0, Number(topK));
  let weights = chosen.map(i => scores[i]);
  if (normalize) {
    if (weights.some(w => w < TINY)) {
      const logs = chosen.map(i => logScore(logits[i], score));
      const top = Math.max(...logs);
      weights = logs.map(v => Math.exp(v - top));
    }
    const total = weights.reduce((a, b) => a + b, 0);
    weights = weights.map(w => w / total);
  }
  // A NaN among the choice values leaves which experts should be chosen unknown (the sort puts
  // it last): the weights are NaN, as ffn's are, not the finite weights of the rest.
  if (order.some(Number.isNaN)) weights = weights.map(() => NaN);
  if (scale !== 1.0) weights = weights.map(w => w * scale);
  return {scores, choice, chosen, weights};
}

/** "3", "3 and 5", "3, 5 and 6": a list as the widget's sentences say it. */
export function listWords(items) {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

/** What the bias changed: experts it brought in (in the biased order) and the ones they
 * replaced (in the unbiased order), comparing the two choices as sets. */
export function biasSwap(biasedChosen, unbiasedChosen) {
  const before = new Set(unbiasedChosen), after = new Set(biasedChosen);
  return {added: biasedChosen.filter(i => !before.has(i)),
          removed: unbiasedChosen.filter(i => !after.has(i))};
}

/** "1st", "2nd", "3rd", "4th" ... "11th", "12th", "13th" ... "21st", "111th": a rank. */
export function ordinal(n) {
  if (!(Number.isSafeInteger(n) && n >= 1) && !(typeof n === "bigint" && n >= 1n)) {
    throw new TypeError(`n must be a positive integer, got ${String(n)}`);
  }
  const last2 = Number(BigInt(n) % 100n);
  const suffix = last2 >= 11 && last2 <= 13 ? "th" : {1: "st", 2: "nd", 3: "rd"}[last2 % 10];
  return `${n}${suffix ?? "th"}`;
}
