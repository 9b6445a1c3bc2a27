#!/usr/bin/env bash
# Cross-compiles the ptuprobe CLI into release binaries: static
# (CGO_ENABLED=0), -trimpath, stripped, the version stamped into cmd.Version.
# Writes OUT/ptuprobe-OS-ARCH[.exe] and OUT/SHA256SUMS, then checks each
# binary: its header (format and machine), its build settings as the Go
# toolchain reads them back (go version -m: GOOS, GOARCH, CGO_ENABLED=0,
# -trimpath), the version string in it, and that the host's own binary
# prints the stamped version.
#
# Usage: scripts/release.sh [--version V] [--out DIR] [OS/ARCH ...]
#   --version  default: git describe --tags --always --dirty (else "dev")
#   --out      default: dist (git-ignored); only ptuprobe-* and SHA256SUMS
#              in it are replaced
#   OS/ARCH    default: linux, darwin and windows on amd64 and arm64
#
# .ci/run builds two targets (linux/amd64 and windows/arm64); the release job
# of .github/workflows/fleet.yml builds all six.
set -euo pipefail
cd "$(dirname "$0")/.."

version="" out=dist targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="${2:?--version needs a value}"; shift 2 ;;
    --version=*) version="${1#*=}"; shift ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "release: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
if [ -z "$version" ]; then
  version=$(git describe --tags --always --dirty 2>/dev/null || true)
  version="${version:-dev}"
fi
# The version goes into -ldflags -X and into file names: keep it one word.
if ! [[ "$version" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$ ]]; then
  echo "release: version '$version' must be letters, digits and . _ + - (at most 64)" >&2; exit 2
fi

fail() { echo "release: $*" >&2; exit 1; }
# hex N OFFSET FILE: N bytes at OFFSET, as hex, in file order.
hex() { od -An -tx1 -j "$2" -N "$1" "$3" | tr -d ' \n'; }

mkdir -p "$out"
rm -f "$out"/ptuprobe-* "$out/SHA256SUMS"
ldflags="-s -w -X github.com/ptuprobe/ptuprobe/cmd.Version=$version"
echo "release: ptuprobe $version → $out/"
for t in "${targets[@]}"; do
  os="${t%/*}" arch="${t#*/}"
  case "$os/$arch" in
    linux/amd64|linux/arm64|darwin/amd64|darwin/arm64|windows/amd64|windows/arm64) ;;
    *) echo "release: unsupported target '$t'" >&2; exit 2 ;;
  esac
  name="ptuprobe-$os-$arch"; [ "$os" = windows ] && name="$name.exe"
  bin="$out/$name"
  start=$SECONDS
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "$ldflags" -o "$bin" .

  # Format and machine from the header.
  case "$os" in
    linux)   # ELF magic; e_machine (little-endian) at 18: 3e00 x86-64, b700 aarch64
      [ "$(hex 4 0 "$bin")" = 7f454c46 ] || fail "$bin is not ELF"
      machine=$(hex 2 18 "$bin"); want=$([ "$arch" = amd64 ] && echo 3e00 || echo b700) ;;
    darwin)  # Mach-O 64-bit magic; cputype at 4: 07000001 x86_64, 0c000001 arm64
      [ "$(hex 4 0 "$bin")" = cffaedfe ] || fail "$bin is not Mach-O 64-bit"
      machine=$(hex 4 4 "$bin"); want=$([ "$arch" = amd64 ] && echo 07000001 || echo 0c000001) ;;
    windows) # MZ, then at e_lfanew "PE\0\0" and the machine: 6486 x86-64, 64aa arm64
      [ "$(hex 2 0 "$bin")" = 4d5a ] || fail "$bin is not a PE (no MZ)"
      pe=$(od -An -tu4 -j 60 -N 4 "$bin" | tr -d ' ')
      [ "$(hex 4 "$pe" "$bin")" = 50450000 ] || fail "$bin has no PE signature"
      machine=$(hex 2 $((pe + 4)) "$bin"); want=$([ "$arch" = amd64 ] && echo 6486 || echo 64aa) ;;
  esac
  [ "$machine" = "$want" ] || fail "$bin: machine $machine, want $want for $arch"

  # Build settings as the toolchain reads them back from the binary.
  info=$(go version -m "$bin") || fail "go version -m cannot read $bin"
  tab=$'\t'
  for want in "build${tab}GOOS=$os" "build${tab}GOARCH=$arch" "build${tab}CGO_ENABLED=0" "build${tab}-trimpath=true" \
              "path${tab}github.com/ptuprobe/ptuprobe"; do
    grep -qF -- "$want" <<<"$info" || fail "$bin: go version -m lacks '$want'"
  done
  # -trimpath keeps -ldflags out of the build info; the stamped string is in
  # the binary's data (the host's binary is run below).
  grep -qaF -- "$version" "$bin" || fail "$bin does not contain the version '$version'"
  printf 'release: %-30s %9s bytes  %3ss' "$name" "$(wc -c <"$bin" | tr -d ' ')" "$((SECONDS - start))"
  if command -v file >/dev/null; then printf '  %s' "$(file -b "$bin" | cut -c1-70)"; fi
  echo
done

(cd "$out" && sha256sum ptuprobe-* > SHA256SUMS && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"

host="$out/ptuprobe-$(go env GOOS)-$(go env GOARCH)"
[ "$(go env GOOS)" = windows ] && host="$host.exe"
if [ -x "$host" ]; then
  got=$("$host" version)
  case "$got" in
    "ptuprobe $version "*) echo "release: $host version → $got" ;;
    *) fail "$host version printed '$got', want 'ptuprobe $version …'" ;;
  esac
else
  echo "release: the host's target ($(go env GOOS)/$(go env GOARCH)) was not built; version not run"
fi
echo "release: OK ($out/SHA256SUMS)"
