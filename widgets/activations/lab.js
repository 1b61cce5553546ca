// The FFN lab's activations (ffn/activations.py), float64, for the activation explorer and the
// key-value memory explorer. Pure functions, no DOM. tests/test_widgets.py holds each one to
// ffn on 1,000 hypothesis-generated inputs, within the tolerances it states (erfc here is a
// series and a continued fraction, not scipy's; Math.exp and Math.tanh are V8's, not glibc's).
// Each takes one real number, as _shared/check.js's checkScalar reads it (a string, null or an
// array is refused: ffn's functions take arrays, these are scalar).

import {checkScalar} from "../_shared/check.js";

const SQRT2 = Math.SQRT2;
const SQRT_PI = Math.sqrt(Math.PI);
const S = Math.sqrt(2.0 / Math.PI), C = 0.044715;  // the tanh approximation's constants

/** erfc(z), complementary error function, to about 1e-15 relative for |z| <= 6.
 * |z| < 2: 1 - erf(z), erf by its odd series, whose terms all have z's sign (no cancellation),
 *   erf(z) = 2/sqrt(pi) exp(-z^2) sum_n z (2 z^2)^n / (1 3 5 ... (2n+1));
 *   for z < 0 that is 1 + erf(|z|), rounded once, as Cephes' erfc (scipy's, ffn's) computes it;
 *   2 - erfc(-z) would round twice (1 - erf(|z|), then 2 minus it), an ulp off at tiny z,
 *   which flipped the sign of the GELU gap the explorer prints at x = 1e-6 (issue 39);
 * z >= 2: the continued fraction erfc(z) = exp(-z^2)/sqrt(pi) / (z + (1/2)/(z + (2/2)/(z + ...))),
 *   200 levels, evaluated from the bottom up; z <= -2: erfc(z) = 2 - erfc(-z).
 * Both lose what exp(-z^2) loses when z^2 is rounded (about z^2 ulp), as scipy's erfc does. */
export function erfc(z) {
  z = checkScalar(z, "z");
  if (Number.isNaN(z)) return z;
  if (Math.abs(z) < 2) {
    const twoZ2 = 2 * z * z;
    let term = z, sum = z;
    for (let n = 1; Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
      term *= twoZ2 / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-z * z) * sum;
  }
  if (z < 0) return 2 - erfc(-z);
  if (z > 27) return 0;  // exp(-z^2) underflows
  let f = z;
  for (let n = 200; n >= 1; n--) f = z + (n / 2) / f;
  return Math.exp(-z * z) / SQRT_PI / f;
}

/** The standard normal CDF, as ffn's Phi: erfc(-x / sqrt 2) / 2. */
export function Phi(x) {
  x = checkScalar(x, "x");
  return 0.5 * erfc(-x / SQRT2);
}
/** The standard normal density. */
export function phi(x) {
  x = checkScalar(x, "x");
  return Math.exp(-0.5 * x * x) / Math.sqrt(2.0 * Math.PI);
}
/** The logistic function as scipy's expit (ffn's sigmoid) computes it: 1 / (1 + exp(-x)),
 * the same operations, so the tanh GELU and SiLU round as ffn's do. No overflow is harmful:
 * exp(-x) = Infinity gives 0. */
export function sigmoid(x) {
  x = checkScalar(x, "x");
  return 1 / (1 + Math.exp(-x));
}

export function relu(x) {
  x = checkScalar(x, "x");
  return Number.isNaN(x) ? x : Math.max(x, 0);
}
export function reluGrad(x) {
  x = checkScalar(x, "x");
  return Number.isNaN(x) ? x : (x > 0 ? 1 : 0);
}
export function gelu(x) {
  x = checkScalar(x, "x");
  x = Math.max(x, -40);
  return x * Phi(x);
}
export function geluGrad(x) {
  x = checkScalar(x, "x");
  x = Math.min(Math.max(x, -40), 40);
  return Phi(x) + x * phi(x);
}
/** The tanh GELU as ffn writes it: 0.5 x (1 + tanh z) as x sigmoid(2z), the same function
 * (1 + tanh z cancels for x << 0; sigmoid's tail does not). */
export function geluTanh(x) {
  x = checkScalar(x, "x");
  x = Math.max(x, -100);  // sigmoid(2z) is exactly 0 below -100: -Infinity gives -0, not NaN
  return x * sigmoid(2 * S * (x + C * x ** 3));
}
export function geluTanhGrad(x) {
  x = checkScalar(x, "x");
  // ffn's form: d/dx [x sigmoid(2z)] = s + x s sigmoid(-2z) 2z', with s = sigmoid(2z); no
  // 1 + tanh(z) to cancel for x << 0 (the old form printed 0.000000 where ffn prints -0.000000)
  x = Math.min(Math.max(x, -100), 100);  // s is exactly 0 or 1 beyond +-100
  const twoZ = 2 * S * (x + C * x ** 3);
  const s = sigmoid(twoZ);
  return s + x * s * sigmoid(-twoZ) * (2 * S * (1 + 3 * C * x * x));
}
export function silu(x) {
  x = checkScalar(x, "x");
  x = Math.max(x, -800);
  return x * sigmoid(x);
}
export function siluGrad(x) {
  x = checkScalar(x, "x");
  x = Math.min(Math.max(x, -800), 800);
  const s = sigmoid(x);
  return s * (1 + x * (1 - s));
}
export function relu2(x) {
  x = checkScalar(x, "x");
  const r = Math.max(x, 0);
  return r * r;
}
export function relu2Grad(x) {
  x = checkScalar(x, "x");
  return 2 * Math.max(x, 0);
}

// Each activation's gate g, with f(x) = x g(x), as ffn.activations.gate computes it.
/** ReLU's gate: the step, 1 for x > 0 and 0 for x <= 0 (numpy's heaviside(x, 0)). */
export function step(x) {
  x = checkScalar(x, "x");
  return Number.isNaN(x) ? x : (x > 0 ? 1 : 0);
}
/** The tanh GELU's gate, (1 + tanh z) / 2 written as sigmoid(2z), as geluTanh uses it. */
export function geluTanhGate(x) {
  x = checkScalar(x, "x");
  x = Math.min(Math.max(x, -100), 100);  // exactly 0 or 1 beyond +-100, as in ffn
  return sigmoid(2 * S * (x + C * x ** 3));
}

/** The activations the explorer shows: name -> [label, f, f', gate g, the gate's name]. */
export const ACTIVATIONS = {
  relu: ["ReLU", relu, reluGrad, step, "step"],
  gelu: ["GELU, exact", gelu, geluGrad, Phi, "Φ(x)"],
  gelu_tanh: ["GELU, tanh", geluTanh, geluTanhGrad, geluTanhGate, "(1 + tanh z) / 2"],
  silu: ["SiLU", silu, siluGrad, sigmoid, "σ(x)"],
  relu2: ["Squared ReLU", relu2, relu2Grad, relu, "max(x, 0)"],
};

