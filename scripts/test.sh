#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs what the tests need, then runs
# the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}

# Python packages, pinned, and Chromium for the rendering tests.
bash scripts/setup.sh
# The crawler's own search (headless shell first, then the chromium package's browser), so
# CI accepts exactly the browsers the crawl would drive.
if [ -n "${CI:-}" ] && ! "$PY" -c 'import sys; from govsi.render.engine import find_chromium
import os; sys.exit(find_chromium(os.environ.get("CHROMIUM_PATH")) is None)' 2>/dev/null; then
  echo "test.sh: Chromium is required for the rendering tests" >&2
  exit 1
fi

# pywb, for the replay tests, in a virtualenv of its own (it pins older packages).
if [ ! -x .venv-replay/bin/wayback ] || ! cmp -s requirements-replay.txt .venv-replay/requirements.txt; then
  echo "test.sh: installing pywb (requirements-replay.txt) into .venv-replay" >&2
  rm -rf .venv-replay
  "$PY" -m venv .venv-replay
  .venv-replay/bin/pip install -q --disable-pip-version-check -r requirements-replay.txt
  cp requirements-replay.txt .venv-replay/requirements.txt
fi

# PostgreSQL server binaries for the throwaway test cluster.
have_pg() {
  [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ] && return 0
  command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && return 0
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
if ! have_pg; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test.sh: installing PostgreSQL server binaries" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  if ! have_pg; then
    echo "test.sh: PostgreSQL server binaries (initdb, pg_ctl) are missing; install PostgreSQL 15" >&2
    exit 1
  fi
fi

# PostgreSQL refuses to run as root; the test cluster then runs as the postgres account.
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "test.sh: creating the unprivileged postgres account for the test cluster" >&2
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

"$PY" -m ruff check govsi tests bench testkit setup.py
# Strict (pyproject.toml's [tool.mypy]): every function typed, closed sets checked.
"$PY" -m mypy govsi
# Two workers (pytest-xdist) on a two-core machine: the end-to-end tests mostly wait on
# politeness delays and child processes, so two at once take about half the time. A file's
# tests stay on one worker (loadfile), so a module's shared crawl runs once; loadgroup's
# groups are lost under pytest 9 (xdist 3.6-3.8 mark them in Item._nodeid, which pytest 9's
# nodeid no longer reads). TEST_WORKERS=0 runs serially.
workers=${TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}
[ "$workers" -gt 4 ] && workers=4
exec "$PY" -m pytest -n "$workers" --dist loadfile "$@"
