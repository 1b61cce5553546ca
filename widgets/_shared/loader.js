// The FFN lab: each <div class="ffn-widget" data-widget="NAME"> that hooks/lab.py filled
// with a table of ffn's numbers (widgets/NAME/data.py) gets its controls from
// widgets/NAME/mount.js (its `mount(root)`). Loaded only on pages with a widget
// (overrides/main.html). Every number a widget shows comes from its lab.js, whose functions
// tests/test_widget*.py hold to ffn; tests/browser/ moves each control and compares the page
// with ffn. Without JavaScript the table stays.

// Each widget is loaded and mounted when it comes near the screen, not at load: a reader who
// never scrolls to it costs the page nothing (Lighthouse counts a mount, d3's included, as
// blocking time). At load, only a widget already on the screen mounts; from the reader's first
// scroll, a widget mounts 600 px before it comes into view, so the table has become the
// controls by the time it is seen. (A 600 px margin from the start mounted the Lab's first
// widget, just below a phone's first screen, with every load of the page.)
const mounted = new Set();
const mountSeen = entries => {
  for (const entry of entries) {
    const root = entry.target;
    if (!entry.isIntersecting || mounted.has(root)) continue;
    mounted.add(root);
    // "NAME" or "NAME-PART" (one widget of several of a kind): NAME/mount.js.
    import(`../${root.dataset.widget.split("-")[0]}/mount.js`).then(async widget => {
      await widget.mount(root);
      root.classList.add("ffn-widget--live");  // hides the table (extra.css), not in print
    }).catch(error => {
      // The table stays; the console says why (the browser tests fail on any console error).
      console.error(`widget ${root.dataset.widget}:`, error);
    });
  }
};
const roots = document.querySelectorAll(".ffn-widget[data-widget]");
const onScreen = new IntersectionObserver(mountSeen);
roots.forEach(root => onScreen.observe(root));
addEventListener("scroll", () => {
  const ahead = new IntersectionObserver(mountSeen, {rootMargin: "600px 0px"});
  roots.forEach(root => ahead.observe(root));
}, {once: true, passive: true});
