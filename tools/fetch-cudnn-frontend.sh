#!/usr/bin/env bash
# Puts cudnn-frontend's C++ headers (header-only, MIT licence; NVIDIA's
# nvidia-cudnn-frontend wheel on PyPI carries them) into DEST (default
# build/cudnn-frontend), where the runtime's configure step looks for them
# (TANDEM_CUDNN, docs/runtime.md "Attention"). Only needed on machines with
# cuDNN, for `tandem-run --attention cudnn`; nothing else uses it.
#
#   bash tools/fetch-cudnn-frontend.sh [DEST]
#
# PYTHON: a python3 with pip (default python3; tandem-dev.sh passes its
# virtual environment's).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.32.0
dest=${1:-build/cudnn-frontend}
if [ -f "$dest/include/cudnn_frontend.h" ] &&
   [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$VERSION" ]; then
  echo "== cudnn-frontend $VERSION present in $dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== fetching cudnn-frontend $VERSION (nvidia-cudnn-frontend wheel) into $dest"
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip download -q --disable-pip-version-check --no-deps \
  --only-binary=:all: "nvidia-cudnn-frontend==$VERSION" -d "$tmp"
wheel=$(ls "$tmp"/nvidia_cudnn_frontend-*.whl)
"$PYTHON" - "$wheel" "$tmp/x" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist()
             if n.startswith("include/") or "licenses/" in n]
    z.extractall(sys.argv[2], names)
PY
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/x/include" "$dest/include"
cp "$tmp"/x/*.dist-info/licenses/* "$dest/" 2>/dev/null || true
echo "$VERSION" > "$dest/VERSION"
echo "== cudnn-frontend $VERSION in $dest/include"
