#!/bin/sh
# Packs build/checkmate with the shared libraries it needs (all but the C
# and C++ runtimes, which any Linux has) into DIR, with DIR/bin/checkmate a
# wrapper that finds them: for a GPU machine that has PyTorch but not
# GLPK, Cbc or Jansson (docs/benchmarks.md, "PyTorch on a GPU"). There:
#   CHECKMATE=$PWD/DIR/bin/checkmate sh bench/cuda.sh OUTDIR
# Usage: bench/cuda_kit.sh DIR   (after make; DIR is emptied first)
set -eu
dir=${1:?usage: bench/cuda_kit.sh DIR}
cd "$(dirname "$0")/.."
[ -x build/checkmate ] || { echo "bench/cuda_kit.sh: no build/checkmate (run make)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib"
cp build/checkmate "$dir/bin/checkmate.real"
ldd build/checkmate | awk '/=> \// { print $1, $3 }' |
	grep -v -E '^(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.' |
	while read -r name path; do cp -L "$path" "$dir/lib/$name"; done
cat > "$dir/bin/checkmate" <<'EOF'
#!/bin/sh
# checkmate with the libraries packed beside it (bench/cuda_kit.sh)
d=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/bin/checkmate.real" "$@"
EOF
chmod +x "$dir/bin/checkmate"
"$dir/bin/checkmate" --version >/dev/null
echo "$dir: $(ls "$dir/lib" | wc -l) libraries, $(du -sh "$dir" | cut -f1)"
