#!/usr/bin/env bash
# browser_check.sh HTML_DIR OUT_DIR
# Opens the docs' index and a lesson page from the file system in headless Chromium, takes
# screenshots, and checks that the lesson title is in the rendered DOM and that the lesson's
# figure loads with a non-zero natural size. Exit 77 (skipped) where Chromium is not installed.
set -u
html=$1 out=$2
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
