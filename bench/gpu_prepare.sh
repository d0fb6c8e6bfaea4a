#!/usr/bin/env bash
# Prepare what a lent GPU machine needs for bench/gpu_check.py and bench/gpu_probe.py.
#
# That machine has no network, no tileiras and no ../shared beside the checkout, so everything is
# made here into two ignored folders that the device call carries:
#   .devcarry/cubins   tileiras cubins of the runnable corpus kernels, with their CTA sizes
#   .devcarry/probes   tileiras cubins of the semantic probes (bench/gpu_probe.py)
#   .devcarry/shared   the corpus kernels' text (the ../shared of .devcarry/clean)
#   .devcarry/clean    the committed tree (HEAD), so that uncommitted work does not run there
#   .whl               wheels of the pure-Python dependencies the GPU image lacks, for its Python 3.12
# Then, on the GPU machine (one call, about 2 minutes on an H200 with 16 cores), carrying .devcarry and .whl:
#   cd .devcarry/clean && python3 -m pip install -q --no-index --no-deps --target /tmp/site ../../.whl/*.whl \
#     && PYTHONPATH=/tmp/site python3 bench/gpu_probe.py run --cubins ../probes --out $OUT \
#     && PYTHONPATH=/tmp/site python3 bench/gpu_check.py run --cubins ../cubins --out $OUT/gc --jobs 16
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.devcarry
python bench/gpu_check.py prepare --out "$carry/cubins"
python bench/gpu_probe.py prepare --out "$carry/probes"
mkdir -p "$carry/shared/corpus/kernels"
cp ../shared/corpus/kernels/*.mlir ../shared/corpus/kernels/MANIFEST.tsv "$carry/shared/corpus/kernels/"
rm -rf "$carry/clean"
mkdir -p "$carry/clean"
git archive HEAD | tar -x -C "$carry/clean"
pins=$(python -m pip list --format=freeze 2>/dev/null | grep -iE '^(lark|pygls|lsprotocol|cattrs)==' | tr '\n' ' ')
# shellcheck disable=SC2086
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .whl $pins
du -sh "$carry" .whl
