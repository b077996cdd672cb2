#!/usr/bin/env bash
# `dlscale train` given hostile arguments, as a hostile-input probe found them: each is refused
# before the run with exit 2, a message naming the argument or file and what was expected, and
# no record written. Before: a Latin-1 --site failed the JSON writer after the run (exit 3, the
# record lost), --out "" ran and wrote nothing, --out a folder or /dev/null failed at open or at
# the sync after the run (exit 3), huge counts died of bad_alloc, a link loop in an image folder
# was a filesystem_error (exit 3), an empty class folder was taken.
# usage: train_cli_test.sh path/to/dlscale
set -u
DLS="$1"
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/cli_test_lib.sh"  # TMP, ok, bad, refusal, finish

# refused NAME PATTERN ARGS...: exit 2, stderr matches PATTERN (grep -e), no $TMP/r.jsonl (not even
# an empty one); the model is cifar10_quick unless ARGS give another
refused() {
  local name="$1" pattern="$2"; shift 2
  rm -f "$TMP/r.jsonl"
  local model=(-m cifar10_quick)
  [[ " $* " == *" -m "* ]] && model=()
  timeout 120 "$DLS" train "${model[@]}" --steps 1 --warmup-steps 0 -q "$@" \
    >"$TMP/stdout" 2>"$TMP/stderr"
  refusal "$name" $? "$pattern" || return
  [ ! -e "$TMP/r.jsonl" ] || { bad "$name: wrote a record"; return; }
  ok
}

out=(--out "$TMP/r.jsonl")
refused "site not UTF-8" "argument .* ('caf\\\\xe9') is not valid UTF-8" --data synthetic:64 --site $'caf\xe9' "${out[@]}"
refused "data path not UTF-8" "is not valid UTF-8" --data $'images:/tmp/\xff' "${out[@]}"
refused "out empty" "--out: an empty path" --data synthetic:64 --out ""
mkdir -p "$TMP/folder"
refused "out a folder" "--out: '$TMP/folder' is a folder" --data synthetic:64 --out "$TMP/folder"
refused "out a device" "--out: '/dev/null' is not a regular file" --data synthetic:64 --out /dev/null
ln -s loop.jsonl "$TMP/loop.jsonl"
refused "out a link loop" "--out: '$TMP/loop.jsonl': Too many levels of symbolic links" --data synthetic:64 --out "$TMP/loop.jsonl"
: > "$TMP/file"
refused "out under a file" "--out: '$TMP/file/r.jsonl': Not a directory" --data synthetic:64 --out "$TMP/file/r.jsonl"
# --out the file stdout goes to (--out /dev/stdout > f): the summary line overwrote the record
# shellcheck disable=SC2094  # the same file on purpose
timeout 60 "$DLS" train -m cifar10_quick --steps 1 --data synthetic:64 --out "$TMP/s.jsonl" >"$TMP/s.jsonl" 2>"$TMP/stderr"
rc=$?
if [ "$rc" -eq 2 ] && grep -q -e "--out: '$TMP/s.jsonl' is this command's standard output" "$TMP/stderr" && [ ! -s "$TMP/s.jsonl" ]; then
  ok
else
  bad "out is stdout: exit $rc: $(cat "$TMP/stderr")"
fi
refused "synthetic count" "synthetic:99999999999999: the indices of 99999999999999 samples needs" \
  --data synthetic:99999999999999 "${out[@]}"
refused "chain frames" "chain:999999999999: 999999999999 frames" -m cvae --data chain:999999999999 "${out[@]}"

# image folders: an empty class, a link loop (root reads every folder, so no chmod case)
python3 - "$TMP/img" <<'PY' || bad "could not write the test images"
import os, struct, sys, zlib
def png(path, w=4, h=4):
    raw = b"".join(b"\0" + b"\x80" * (3 * w) for _ in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
root = sys.argv[1]
for c in ("a", "b"):
    os.makedirs(os.path.join(root, c))
png(os.path.join(root, "a", "x.png"))
PY
refused "empty class folder" "class folder $TMP/img/b has no .png or .jpg files" --data "images:$TMP/img" "${out[@]}"
cp "$TMP/img/a/x.png" "$TMP/img/b/y.png"
ln -s loop.png "$TMP/img/b/loop.png"
refused "link loop" "cannot read $TMP/img/b/loop.png" --data "images:$TMP/img" "${out[@]}"
rm "$TMP/img/b/loop.png"

# the same folder, whole: runs and writes its record (the cases above fail for their reason)
if timeout 120 "$DLS" train -m cifar10_quick --steps 1 --warmup-steps 0 -q --data "images:$TMP/img" \
     --site $'caf\xc3\xa9' "${out[@]}" >"$TMP/stdout" 2>"$TMP/stderr"; then
  if python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read()); assert r['status']=='ok' and r['provenance']['site']=='caf\u00e9', r" \
    "$TMP/r.jsonl"; then ok; else bad "the whole image folder's record: $(cat "$TMP/r.jsonl")"; fi
else
  bad "the whole image folder did not run: $(cat "$TMP/stderr")"
fi

# an image that fails after the first step (decoded when first read, --no-cache): the run ends
# there, exit 3, and its record says so with the steps run (it was lost: a ConfigError mid-run
# was taken for bad arguments, exit 2 and no record)
for i in 1 2 3 4 5 6 7 8; do cp "$TMP/img/a/x.png" "$TMP/img/a/x$i.png"; done
printf 'not a png' > "$TMP/img/b/z.png"
rm -f "$TMP/r.jsonl"
timeout 120 "$DLS" train -m cifar10_quick --data "images:$TMP/img" --holdout 0 --eval-every -1 \
  --batch 1 --steps 11 --warmup-steps 0 --no-cache -q "${out[@]}" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
if [ "$rc" -eq 3 ] && python3 - "$TMP/r.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["status"] == "failed" and "z.png" in r["error"] and "the input failed at step" in r["error"], r["error"]
assert r["metrics"]["steps"] >= 1, r["metrics"]
PY
then ok; else bad "a data error mid-run: exit $rc, record: $(cat "$TMP/r.jsonl" 2>&1) $(cat "$TMP/stderr")"; fi

finish "train cli"
