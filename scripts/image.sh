#!/usr/bin/env bash
# Builds the ptuprobe container image with buildah and runs the main job in
# it, against the embedded simulator (no network, no credentials):
#
#   1. scripts/release.sh builds the static linux binary for this machine;
#   2. buildah bud --isolation chroot --target prebuilt (Containerfile) puts
#      it and Debian's CA certificates on scratch: no registry needed;
#   3. buildah run --isolation chroot runs `/ptuprobe characterize` as the
#      image's user (65532) with a host folder mounted at /results, and
#      checks exit 0, the report files, that they belong to that user, and
#      that nothing was written into the image's own filesystem.
#
# Usage: scripts/image.sh [--keep] [--version V] [-- EXTRA characterize FLAGS]
#   --keep     keep the image (localhost/ptuprobe:V) and print how to push it
#   --version  default: git describe --tags --always --dirty (else "dev")
#
# Without buildah it says so and exits 0 (it installs nothing; on Debian:
# apt-get install buildah). podman run is refused on these machines (it
# cannot set resource limits); buildah run with chroot isolation runs a
# static image without them. Needs root (or a configured rootless buildah).
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0 version="" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --version) version="${2:?--version needs a value}"; shift 2 ;;
    --version=*) version="${1#*=}"; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "image: unknown argument $1" >&2; exit 2 ;;
  esac
done

if ! command -v buildah >/dev/null 2>&1; then
  echo "image: buildah not found; skipped (install it with: apt-get install buildah)"
  exit 0
fi
if [ -z "$version" ]; then
  version=$(git describe --tags --always --dirty 2>/dev/null || true)
  version="${version:-dev}"
fi
# The image's CA bundle: the Mozilla set as Debian's ca-certificates ships
# it, not the machine's /etc/ssl/certs bundle, which also holds any local CA
# added to this machine (a company's, a proxy's) that the image must not trust.
mozilla=/usr/share/ca-certificates/mozilla
if ! ls "$mozilla"/*.crt >/dev/null 2>&1; then
  echo "image: no CA certificates in $mozilla (apt-get install ca-certificates)" >&2; exit 1
fi

fail() { echo "image: $*" >&2; exit 1; }
tag="localhost/ptuprobe:$version"
tmp=$(mktemp -d)
ctr=""
cleanup() {
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  if [ "$keep" != 1 ]; then buildah rmi "$tag" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

t0=$SECONDS
arch=$(go env GOARCH)
scripts/release.sh --version "$version" --out "$tmp/dist" "linux/$arch" | sed 's/^/  /'
mkdir "$tmp/context"
cp "$tmp/dist/ptuprobe-linux-$arch" "$tmp/context/ptuprobe"
for c in "$mozilla"/*.crt; do
  # honour certificates deselected in /etc/ca-certificates.conf ("!mozilla/NAME")
  grep -qxF "!mozilla/${c##*/}" /etc/ca-certificates.conf 2>/dev/null && continue
  cat "$c"; echo
done > "$tmp/context/ca-certificates.crt"
ncerts=$(grep -c 'BEGIN CERTIFICATE' "$tmp/context/ca-certificates.crt")
t1=$SECONDS

# The image's creation time is the commit's, so a rebuild of the same
# commit gives the same image.
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
buildah bud --quiet --isolation chroot --target prebuilt --timestamp "$epoch" \
  --build-arg VERSION="$version" -f Containerfile -t "$tag" "$tmp/context" >/dev/null
t2=$SECONDS
size=$(buildah images --format '{{.Size}}' "$tag" | head -1)
user=$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$tag")
entry=$(buildah inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$tag")
echo "image: built $tag ($size, user $user, entrypoint $entry, $ncerts CA certificates) in $((t2 - t1))s"
[ "$user" = "65532:65532" ] || fail "image user is '$user', want 65532:65532"
[ "$entry" = "[/ptuprobe]" ] || fail "image entrypoint is $entry"

ctr=$(buildah from --pull=never --quiet "$tag")
out="$tmp/results"
mkdir "$out"
chmod 0777 "$out" # the image's user (65532) writes here
got=$(buildah run --isolation chroot -v "$out:/results" "$ctr" -- /ptuprobe version)
case "$got" in "ptuprobe $version "*) ;; *) fail "version in the image: '$got'" ;; esac
echo "image: $got"
rc=0
buildah run --isolation chroot -v "$out:/results" "$ctr" -- \
  /ptuprobe characterize --out-dir /results/report --quiet \
  --fail-if 'burst.count<50' --fail-if 'scheduled.count<10' --fail-if 'errors>0' \
  "${extra[@]}" || rc=$?
t3=$SECONDS
[ "$rc" = 0 ] || fail "characterize in the image exited $rc"

for f in results.csv retry_after_ms_percentiles.csv retry_after_ms_events.csv summary.md analysis.json \
         retry_after_ms_ecdf.png retry_after_ms_ecdf.svg retry_after_ms_histogram.png; do
  [ -s "$out/report/$f" ] || fail "report/$f is missing or empty"
done
owner=$(stat -c %u:%g "$out/report/results.csv")
[ "$owner" = "65532:65532" ] || fail "results.csv belongs to $owner, want the image's user 65532:65532"

# The image's filesystem belongs to root but for the empty /results (the
# WORKDIR, the user's, so that a fresh volume mounted there is writable),
# and the job ran as 65532: anything ptuprobe wrote outside the mounted
# --out-dir would be owned by 65532 (or fail, as on Kubernetes' read-only
# root). There must be none.
root=$(buildah mount "$ctr")
written=$(cd "$root" && find . \( ! -user 0 -o ! -group 0 \) ! -path ./results -print | head -20
          find ./results -mindepth 1 -print | head -20)
buildah umount "$ctr" >/dev/null
[ -z "$written" ] || fail "written inside the image's filesystem: $written"

echo "image: characterize in the image: exit 0, report complete, files owned by 65532 ($((t3 - t2))s)"
sed 's/^/  /' "$out/report/retry_after_ms_percentiles.csv"
echo "image: OK in $((SECONDS - t0))s (binary $((t1 - t0))s, build $((t2 - t1))s, run $((t3 - t2))s)"
if [ "$keep" = 1 ]; then
  echo "image: kept $tag; push it with: buildah push $tag docker://REGISTRY/ptuprobe:$version"
fi
