// An exercise's answer boxes (docs/exercises.md): one labelled text field per number the
// exercise asks for, checked with ./lab.js against ffn's answer, which the build put in the
// widget's JSON (data.py). A wrong answer is not revealed: the solution below the boxes does
// that. tests/browser/test_widget_answers.py types into every box. The steps: build the boxes,
// read and check one (lab.js), describe the result (`message`).
import {checkAnswer} from "./lab.js";
import {escape, fragment, uid} from "../_shared/dom.js";

const EXAMPLES = "for example 0.25, \u22123 or 4.7e6";

function message(result, box) {
  if (result.status === "right") return `Right: ${box.shown}.`;
  if (result.status === "wrong") {
    return `Not quite: check your working (${box.words}), or open the solution below.`;
  }
  if (result.reason === "empty") return `Type a number first, ${EXAMPLES}.`;
  if (result.reason === "percent") return "Type the number without a percent sign.";
  return `That is not a number: type digits, ${EXAMPLES}.`;
}

export function mount(root) {
  const data = JSON.parse(root.querySelector(".ffn-widget__data").textContent);
  root.append(fragment(controls(uid("answers"), data)));
  data.boxes.forEach((box, i) => {
    const input = root.querySelector(`[data-box="${i}"]`);
    const output = root.querySelector(`[data-result="${i}"]`);
    const check = () => {
      const result = checkAnswer(input.value, box.expected, box.rounding);
      output.dataset.status = result.status;
      output.value = message(result, box);
    };
    root.querySelector(`[data-check="${i}"]`).addEventListener("click", check);
    input.addEventListener("keydown", event => {
      if (event.key === "Enter") {
        event.preventDefault();
        check();
      }
    });
  });
}

/** The boxes: a labelled field, a Check button and the result's <output> per number. */
function controls(id, data) {
  const boxes = data.boxes.map((box, i) => `
    <div class="ffn-answer">
      <label for="${id}-${i}">Your answer: ${escape(box.label)}
        <span class="ffn-answer__rounding">(${escape(box.words)})</span> =</label>
      <span class="ffn-answer__controls">
        <input id="${id}-${i}" type="text" inputmode="decimal" autocomplete="off"
          spellcheck="false" data-box="${i}">
        <button type="button" data-check="${i}">Check</button>
      </span>
      <output for="${id}-${i}" data-result="${i}" aria-live="polite"></output>
    </div>`).join("");
  return `
    <div class="ffn-widget__live ffn-answers" role="group"
      aria-label="Check your answer to ${escape(data.exercise)}">${boxes}</div>`;
}
