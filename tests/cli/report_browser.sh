#!/usr/bin/env bash
# report_browser.sh REPORT_TOOL TRACE_TOOL WORK: `workbook report` as a person uses it. The page of
# three stored traces (a GPU trace, a lesson's CPU trace, a gzip one) is opened from the disk in
# headless Chromium with a probe appended: no script error, the operator table's rows are those of
# `trace --json --limit 0` in the same order, a click on "Self CPU" reorders them by self CPU time,
# the flame graph zooms on a click. A screenshot is kept in WORK. Bad input writes nothing.
# Exit 77 (skipped) without Chromium for the browser part.
set -u
report=$1 trace=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data/traces"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "report_browser: $*" >&2; exit 1; }
first="$data/alexnet_cuda.json"
"$report" "$first" "$data/workbook_lesson01.json" "$data/rocm_minitoy_train.pt.trace.json.gz" -o "$work/report.html" \
  >/dev/null || fail "report failed"
grep -qE '(src|href)="?(https?:)?//' "$work/report.html" && fail "the page loads something from the network"
# Bad input: one line, exit 2, nothing written.
err=$("$report" "$data/missing.json" -o "$work/never.html" 2>&1)
status=$?
if [ "$status" -ne 2 ] || [ "$(printf '%s\n' "$err" | grep -c .)" -ne 1 ] || [ -e "$work/never.html" ]; then
  fail "a missing trace gave exit $status: $err"
fi
"$report" "$first" -o "$first" >/dev/null 2>&1 && fail "-o onto an input was accepted"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: Chromium is not installed, so the report is not opened"
  exit 77
fi
# The probe: errors are caught from the first script on; the checks run once the page is drawn.
python3 - "$work/report.html" "$work/probe.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
catch = '<script>window.__errors = []; addEventListener("error", (e) => __errors.push(String(e.message)));</script>'
probe = r'''<script>
const rows = () => [...document.querySelectorAll("#operators-0 tbody tr")].map((tr) => [tr.children[0].title, tr.children[1].textContent]);
const result = {ready: document.body.dataset.ready === "1", before: rows()};
const th = [...document.querySelectorAll("#operators-0 th")].find((h) => h.textContent.startsWith("Self CPU"));
th.click();
result.after = rows();
const flame = document.getElementById("flame-0"), frames = flame.querySelectorAll(".frame");
result.frames = frames.length;
const deep = [...frames].find((f) => parseInt(f.style.top) >= 18);
if (deep) { deep.click(); result.zoomed = flame.parentElement.querySelector("p.note").textContent; }
result.errors = window.__errors;
document.title = "RESULT " + JSON.stringify(result);
</script>'''
page = page.replace("<head>", "<head>" + catch, 1).replace("</body>", probe + "</body>", 1)
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
run() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --virtual-time-budget=5000 \
    --window-size=1280,2400 "$@" 2>/dev/null
}
run --dump-dom "file://$work/probe.html" | grep -o '<title>RESULT [^<]*</title>' | sed 's/^<title>RESULT //; s/<\/title>$//' \
  >"$work/result.json"
"$trace" "$first" --json --limit 0 >"$work/rows.json" || fail "trace --json failed"
python3 - "$work/result.json" "$work/rows.json" <<'PY' || exit 1
import html, json, sys
raw = open(sys.argv[1]).read().strip()
if not raw:
    sys.exit("report_browser: the probe gave no result (the page did not run)")
result = json.loads(html.unescape(raw))
rows = json.load(open(sys.argv[2]))
problems = []
if result["errors"]:
    problems.append(f"script errors: {result['errors']}")
if not result["ready"]:
    problems.append("the page's script did not finish")
want = [[r["name"], str(r["count"])] for r in rows]
if result["before"] != want:
    problems.append(f"the operator table's rows differ from trace --json's ({len(result['before'])} vs {len(want)} rows)")
by_self = [[r["name"], str(r["count"])] for r in sorted(rows, key=lambda r: -r["self_cpu_us"])]
if result["after"] != by_self:
    problems.append("after a click on 'Self CPU' the rows are not in self CPU order")
if result["after"] == result["before"]:
    problems.append("the click on 'Self CPU' did not reorder the rows")
if result["frames"] < 3 or " > " not in result.get("zoomed", ""):
    problems.append(f"the flame graph did not zoom on a click ({result['frames']} frames, {result.get('zoomed')!r})")
if problems:
    sys.exit("report_browser: " + "; ".join(problems))
print(f"report_browser: {len(want)} operator rows equal trace --json's, sorted by a click, flame graph zooms, no script error")
PY
run --screenshot="$work/report.png" "file://$work/report.html" >/dev/null
[ -s "$work/report.png" ] || fail "no screenshot was taken"
echo "report_browser: page $(wc -c <"$work/report.html") bytes, screenshot $work/report.png"
