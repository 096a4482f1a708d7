#!/usr/bin/env bash
# Anthropic's public `pdf` and `xlsx` skills run for real: a script of each against a sample file, the first run
# installing what the skill imports in the sealed install phase (from PyPI, or the mirror airlock's environment
# names), the second reusing the cached layer. Beside them, what a user would do by hand on the host: a fresh
# `pip install --no-cache-dir --target` of the same packages (no cache, as the sealed phase has none), then the
# same script. PAIRS fresh data folders, each measured in
# turn; medians, and the ratio of each to the host's install-and-run. Needs the skills repository checked out
# (it is not part of airlock) and the package index reachable.
#
#   bench/real-skills.sh SKILLS_REPO [TRUST_NAME...]
#   AIRLOCK=/path/to/airlock PAIRS=5 bench/real-skills.sh ~/src/skills pypi.org files.pythonhosted.org
#
# TRUST_NAME: the index's names when they resolve to a private address (an internal mirror); see --trust-name.
set -euo pipefail
repo=$(cd "${1:?usage: bench/real-skills.sh SKILLS_REPO [TRUST_NAME...]}" && pwd)
shift
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
pairs=${PAIRS:-5}
trust=()
for name in "$@"; do trust+=(--trust-name "$name"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sample project: a one-page PDF and a small workbook, written without any package.
mkdir -p "$work/proj"
python3 - "$work/proj" <<'PY'
import sys, zipfile
out = sys.argv[1]
objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"]
pdf, offsets = b"%PDF-1.4\n", []
for i, o in enumerate(objs):
    offsets.append(len(pdf))
    pdf += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
xref = len(pdf)
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
pdf += b"".join(b"%010d 00000 n \n" % o for o in offsets)
pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open(f"{out}/input.pdf", "wb").write(pdf)
parts = {
    "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
    "_rels/.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
    "xl/workbook.xml": '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels": '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    "xl/worksheets/sheet1.xml": '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>2</v></c><c r="B1"><f>A1*3</f></c></row></sheetData></worksheet>',
}
with zipfile.ZipFile(f"{out}/book.xlsx", "w") as z:
    for name, text in parts.items():
        z.writestr(name, text)
PY
git -C "$work/proj" init -q
git -C "$work/proj" add .
git -C "$work/proj" -c user.email=bench@localhost -c user.name=bench commit -qm sample

ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# skill, script, the packages airlock finds it needs (the host installs the same by hand), script arguments
cases=(
  "pdf|scripts/check_fillable_fields.py|Pillow pdf2image pdfplumber pypdf|input.pdf"
  "xlsx|scripts/office/unpack.py|defusedxml lxml openpyxl|book.xlsx unpacked"
)
echo "airlock: $bin; pairs: $pairs; load: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
for c in "${cases[@]}"; do
  IFS='|' read -r skill script pkgs args <<<"$c"
  : >"$work/host" && : >"$work/first" && : >"$work/second" && : >"$work/r1" && : >"$work/r2"
  for i in $(seq "$pairs"); do
    rm -rf "$work/site" "$work/data" "$work/copy"
    cp -r "$work/proj" "$work/copy"
    t0=$(ms)
    # shellcheck disable=SC2086
    python3 -m pip install -q --no-cache-dir --target "$work/site" $pkgs >/dev/null 2>&1
    (cd "$work/copy" && PYTHONPATH="$work/site" python3 "$repo/skills/$skill/$script" $args >/dev/null 2>&1) || true
    t1=$(ms)
    # shellcheck disable=SC2086
    "$bin" run --data-dir "$work/data" "$repo/skills/$skill" --target "$work/proj" "${trust[@]}" \
      --script "$script" -- $args >"$work/out1" || { cat "$work/out1"; exit 1; }
    t2=$(ms)
    # shellcheck disable=SC2086
    "$bin" run --data-dir "$work/data" "$repo/skills/$skill" --target "$work/proj" "${trust[@]}" \
      --script "$script" -- $args >"$work/out2" || { cat "$work/out2"; exit 1; }
    t3=$(ms)
    grep -q "installed in a sealed phase" "$work/out1" || { cat "$work/out1"; exit 1; }
    grep -q "was reused from the cache" "$work/out2" || { cat "$work/out2"; exit 1; }
    host=$((t1 - t0)) first=$((t2 - t1)) second=$((t3 - t2))
    echo "$host" >>"$work/host"; echo "$first" >>"$work/first"; echo "$second" >>"$work/second"
    echo "scale=3; $first / $host" | bc >>"$work/r1"
    echo "scale=3; $second / $host" | bc >>"$work/r2"
  done
  printf '%s (%s): host pip+script %s ms; airlock first %s ms (ratio %s); second %s ms (ratio %s)\n' \
    "$skill" "$script" "$(median <"$work/host")" "$(median <"$work/first")" "$(median <"$work/r1")" \
    "$(median <"$work/second")" "$(median <"$work/r2")"
done
