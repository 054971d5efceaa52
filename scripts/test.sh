#!/usr/bin/env bash
# Set up everything the tests need, then run the whole suite.
# Used by CI (.ci/run) and by developers: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

# pyserq 0.1.4 (the reference for the `fn main` dialect) beside 0.1.2, in a
# folder of its own: the differential tests load it in a separate process.
side=.cache/pyserq-0.1.4
if [ ! -f "$side/pyserq/__init__.py" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$side" pyserq==0.1.4
fi
export PYSERQ_014_PATH="$PWD/$side"

ruff check .
python3 -m pytest "$@"
