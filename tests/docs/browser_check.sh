#!/usr/bin/env bash
# browser_check.sh HTML_DIR OUT_DIR [ABSOLUTE_FOLDER...]
# Opens the docs' index and a lesson page from the file system in headless Chromium, takes
# screenshots, and checks that the lesson title is in the rendered DOM, that the lesson's figure
# loads with a non-zero natural size, and that every figure with axes fits its data. Exit 77 (skipped) where Chromium is not installed.
set -u
html=$1 out=$2
shift 2
# Paths in the pages are relative to the project: no page names the folders it was built in
# (the remaining arguments: the project's and the build's absolute paths). Checked with or
# without a browser.
for folder in "$@"; do
  # As a path of its own (not the tail of a relative one such as lessons/findings/src/).
  pattern="(^|[^A-Za-z0-9_./-])$(printf '%s' "$folder/" | sed 's/[][\.^$*+?(){}|]/\\&/g')"
  if pages=$(grep -rlE --include='*.html' -- "$pattern" "$html"); then
    echo "browser_check: pages name the absolute path $folder/: $(printf '%s' "$pages" | head -n3 | tr '\n' ' ')" >&2
    exit 1
  fi
done
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: Chromium is not installed (apt-get install chromium), so the rendered docs are not checked"
  exit 77
fi
mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
run() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    --allow-file-access-from-files --virtual-time-budget=5000 --window-size=1280,1600 "$@" 2>/dev/null
}
fail() { echo "browser_check: $*" >&2; exit 1; }

run --screenshot="$out/index.png" "file://$html/index.html" >/dev/null
run --screenshot="$out/lesson_02_scale.png" "file://$html/lesson_02_scale.html" >/dev/null
[ -s "$out/index.png" ] && [ -s "$out/lesson_02_scale.png" ] || fail "no screenshot was taken"

dom=$(run --dump-dom "file://$html/lesson_02_scale.html")
printf '%s' "$dom" | grep -q "Lesson 02" || fail "the lesson title is not in the rendered page"
printf '%s' "$dom" | grep -q 'data="02_scale.svg"' || fail "the lesson page does not embed its figure"

# The figure itself, loaded by a page next to it that reports its natural size in the title.
probe="$html/.figure-probe.html"
cat >"$probe" <<'HTML'
<!doctype html><title>pending</title>
<img src="02_scale.svg" onload="document.title = 'loaded ' + this.naturalWidth + 'x' + this.naturalHeight"
     onerror="document.title = 'failed'">
HTML
size=$(run --dump-dom "file://$probe" | grep -o '<title>[^<]*</title>')
rm -f "$probe"
case "$size" in
  "<title>loaded 0x"* | *"x0</title>" | *failed* | *pending*) fail "the figure did not load: $size" ;;
  "<title>loaded "*) echo "browser_check: lesson title rendered, figure $size, screenshots in $out" ;;
  *) fail "unexpected probe result: $size" ;;
esac

# Every lesson figure with axes, as rendered: the plotted data (class "data") must span at least a
# third of the plot area's height (class "plot-area"), or the figure hides its story on a scale
# chosen for other data. Figures without axes (timelines, flame graphs) have no plot area.
figures=$(cd "$html" && ls [0-9][0-9]_*.svg 2>/dev/null | tr '\n' ' ')
[ -n "$figures" ] || fail "no lesson figure in $html"
probe="$html/.span-probe.html"
cat >"$probe" <<HTML
<!doctype html><title>pending</title><body><script>
const names = "$figures".trim().split(" "), results = [];
let left = names.length;
const done = (text) => { results.push(text); if (--left === 0) document.title = "spans " + results.join(" "); };
for (const name of names) {
  const o = document.createElement("object");
  o.type = "image/svg+xml";
  o.data = name;
  o.onerror = () => done(name + "=failed");
  o.onload = () => {
    const d = o.contentDocument;
    const area = d && d.querySelector(".plot-area");
    if (!d) return done(name + "=unreadable");
    if (!area) return done(name + "=no-axes");
    let lo = Infinity, hi = -Infinity;
    for (const e of d.querySelectorAll(".data")) {
      const b = e.getBBox();
      if (b.width > 0 || b.height > 0) lo = Math.min(lo, b.y), hi = Math.max(hi, b.y + b.height);
    }
    done(name + "=" + (hi > lo ? (hi - lo) / area.getBBox().height : 0).toFixed(2));
  };
  document.body.appendChild(o);
}
</script></body>
HTML
spans=$(run --dump-dom "file://$probe" | grep -o '<title>[^<]*</title>' | sed 's/<[^>]*>//g')
rm -f "$probe"
case "$spans" in spans\ *) ;; *) fail "the figures' spans were not measured: $spans" ;; esac
measured=0
for entry in ${spans#spans }; do
  name=${entry%%=*} share=${entry#*=}
  case "$share" in
    no-axes) continue ;;
    failed | unreadable) fail "figure $name: $share" ;;
  esac
  awk -v s="$share" 'BEGIN { exit !(s >= 0.3333) }' ||
    fail "figure $name: its data span $share of the plot's height (at least a third expected): the axis does not fit the data"
  measured=$((measured + 1))
done
[ "$measured" -gt 0 ] || fail "no figure with axes was measured (${spans})"
echo "browser_check: $measured figures with axes, each with data over at least a third of its plot: ${spans#spans }"

# The report's page shows its screenshot (a real PNG) and links the report it was taken of.
report_dom=$(run --dump-dom "file://$html/report_page.html")
printf '%s' "$report_dom" | grep -q 'src="report.png"' || fail "the report's page shows no screenshot"
printf '%s' "$report_dom" | grep -q 'href="report_example.html"' || fail "the report's page does not link the report"
[ "$(head -c 8 "$html/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "report.png is not a PNG"
grep -q 'id="report-data"' "$html/report_example.html" || fail "report_example.html is not a report"
echo "browser_check: the report's page shows its screenshot and links the report"
