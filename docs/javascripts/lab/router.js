// The FFN lab's router (ffn/moe.py, MixtureOfExperts._route) for one token, float64, for the
// router explorer (Mixture of experts). Pure functions, no DOM. tests/test_widget_router.py
// holds them to ffn's own MixtureOfExperts.route on 1,000 hypothesis-generated inputs: the
// chosen experts equal, the scores and weights within the tolerance it states (Math.exp is
// V8's, not glibc's; numpy sums pairwise).

export const ROUTER_SCORES = ["softmax", "sigmoid"];  // ffn.moe.SCORES

/** The router's scores of one token's logits, as ffn computes them: softmax shifted by the
 * largest logit (exp cannot overflow), or 1 / (1 + exp(-logit)). */
export function routerScores(logits, score) {
  if (score === "softmax") {
    const top = Math.max(...logits);
    const e = logits.map(l => Math.exp(l - top));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map(v => v / total);
  }
  if (score === "sigmoid") return logits.map(l => 1.0 / (1.0 + Math.exp(-l)));
  throw new Error(`score must be one of ${ROUTER_SCORES.join(", ")}, got ${score}`);
}

/** The experts in order of their choice values, largest first; equal values: the lower index
 * first (numpy's stable argsort of -value, as ffn sorts). */
export function rankExperts(values) {
  return values.map((_, i) => i).sort((a, b) => (values[b] - values[a]) || (a - b));
}

/** One token's route, as MixtureOfExperts.route (one group): `scores` p from the logits; the
 * `chosen` top-k experts by p + bias (the bias only chooses), largest first; their `weights`,
 * the unbiased p of the chosen divided by their sum (`normalize`), times `scale`. Also the
 * `choice` values p + bias. */
export function route(logits, topK, score = "softmax", bias = null, normalize = true,
                      scale = 1.0) {
  const n = logits.length;
  topK = Number(topK);
  if (!Number.isInteger(topK) || topK < 1 || topK > n) {
    throw new Error(`top_k must be an integer from 1 to ${n}, got ${topK}`);
  }
  const scores = routerScores(logits, score);
  const choice = bias === null ? scores.slice() : scores.map((p, i) => p + bias[i]);
  const chosen = rankExperts(choice).slice(0, topK);
  let weights = chosen.map(i => scores[i]);
  if (normalize) {
    const total = weights.reduce((a, b) => a + b, 0);
    weights = weights.map(w => w / total);
  }
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

/** "1st", "2nd", "3rd", "4th" ... : an expert's rank among the chosen. */
export function ordinal(n) {
  n = Number(n);
  const suffix = {1: "st", 2: "nd", 3: "rd"}[n > 20 ? n % 10 : n] ?? "th";
  return `${n}${suffix}`;
}
