// The FFN lab: each <div class="ffn-widget" data-widget="NAME"> that hooks/widgets.py filled
// with a table of ffn's numbers (ffn_docs/widgets.py) gets its controls from
// javascripts/widgets/NAME.js (its `mount(root)`). Loaded only on pages with a widget
// (overrides/main.html). Every number a widget shows comes from javascripts/lab/*.js, whose
// functions tests/test_widgets.py holds to ffn; tests/browser/test_widgets.py moves each
// control and compares the page with ffn. Without JavaScript the table stays.

// Each widget is loaded and mounted when it comes near the screen, not at load: a reader who
// never scrolls to it costs the page nothing (Lighthouse counts its layout as blocking time).
const observer = new IntersectionObserver(entries => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    const root = entry.target;
    observer.unobserve(root);
    // "NAME" or "NAME-PART" (one widget of several of a kind): javascripts/widgets/NAME.js.
    import(`./widgets/${root.dataset.widget.split("-")[0]}.js`).then(async widget => {
      await widget.mount(root);
      root.classList.add("ffn-widget--live");  // hides the table (extra.css), not in print
    }).catch(error => {
      // The table stays; the console says why (the browser tests fail on any console error).
      console.error(`widget ${root.dataset.widget}:`, error);
    });
  }
}, {rootMargin: "600px 0px"});
for (const root of document.querySelectorAll(".ffn-widget[data-widget]")) observer.observe(root);
