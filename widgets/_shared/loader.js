// The FFN lab: each <div class="ffn-widget" data-widget="NAME"> that hooks/lab.py filled
// with a table of ffn's numbers (widgets/NAME/data.py) gets its controls from
// widgets/NAME/mount.js (its `mount(root)`). Loaded only on pages with a widget
// (overrides/main.html). Every number a widget shows comes from its lab.js, whose functions
// tests/test_widget*.py hold to ffn; tests/browser/ moves each control and compares the page
// with ffn. Without JavaScript the table stays.

// Each widget is loaded and mounted when it comes near the screen, not at load: a reader who
// never scrolls to it costs the page nothing (Lighthouse counts its layout as blocking time).
const observer = new IntersectionObserver(entries => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    const root = entry.target;
    observer.unobserve(root);
    // "NAME" or "NAME-PART" (one widget of several of a kind): NAME/mount.js.
    import(`../${root.dataset.widget.split("-")[0]}/mount.js`).then(async widget => {
      await widget.mount(root);
      root.classList.add("ffn-widget--live");  // hides the table (extra.css), not in print
    }).catch(error => {
      // The table stays; the console says why (the browser tests fail on any console error).
      console.error(`widget ${root.dataset.widget}:`, error);
    });
  }
}, {rootMargin: "600px 0px"});
for (const root of document.querySelectorAll(".ffn-widget[data-widget]")) observer.observe(root);
