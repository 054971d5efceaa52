#!/usr/bin/env bash
# Set up everything the tests need, then run the whole suite.
# Used by CI (.ci/run) and by developers: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test,plot,dask,tables]'

# pyserq 0.1.4 (the reference for the `fn main` dialect) beside 0.1.2, in a
# folder of its own: the differential tests load it in a separate process.
side=.cache/pyserq-0.1.4
if [ ! -f "$side/pyserq/__init__.py" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$side" pyserq==0.1.4
fi
export PYSERQ_014_PATH="$PWD/$side"

# The VS Code extension's tests (tests/editors runs `npm test`): Node.js and
# npm (Debian's, when the machine has none), then the locked npm packages,
# installed again only when package-lock.json changes. Without Node the
# extension's tests skip, saying why; in CI that is an error.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }; then
    echo "scripts/test.sh: could not install nodejs and npm" >&2
    [ "${CI:-}" != true ] || exit 1
  fi
fi
if command -v npm >/dev/null; then
  lock_hash=$(sha256sum editors/vscode/package-lock.json | cut -d' ' -f1)
  stamp=editors/vscode/node_modules/.serq-lock-sha256
  if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
    (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    echo "$lock_hash" >"$stamp"
  fi
fi

# The Neovim test (tests/editors/test_neovim.py) drives Debian's Neovim (0.7.2 on
# Debian 12) headless against serq-lsp. Without it that test skips; in CI that is an error.
if ! command -v nvim >/dev/null; then
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null; }; then
    echo "scripts/test.sh: could not install neovim" >&2
    [ "${CI:-}" != true ] || exit 1
  fi
fi

ruff check .
# Every example and valid corpus program is in `serq fmt`'s layout.
find examples tests/corpus/valid tests/corpus/valid_main -name '*.sq' -print0 | xargs -0 python3 -m serq.cli fmt --check
# On every core this process may use (pytest-xdist; at most four workers, each a few
# hundred MB): a test file's tests stay together on one worker, in their order, as they
# were written to run. SERQ_TEST_WORKERS=N sets the count; 0 runs them in this process.
workers=${SERQ_TEST_WORKERS:-$(python3 -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')}
python3 -m pytest -n "$workers" --dist loadfile "$@"
