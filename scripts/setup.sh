#!/usr/bin/env bash
# Installs what govsi needs to crawl: the pinned Python packages and, for JavaScript
# rendering (RENDER_JS), Debian's Chromium. Playwright's own browser downloads are never
# used (`playwright install` is not run): the crawler drives the system Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}

if ! "$PY" -m pip install -q --disable-pip-version-check -r requirements.txt; then
  echo "setup.sh: installing requirements.txt failed" >&2
  exit 1
fi

have_chromium() {
  [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ] && return 0
  [ -x /usr/lib/chromium/chromium-headless-shell ] || [ -x /usr/lib/chromium/chromium ] \
    || command -v chromium-headless-shell >/dev/null 2>&1 \
    || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
}
have_headless_shell() {
  [ -x /usr/lib/chromium/chromium-headless-shell ] \
    || command -v chromium-headless-shell >/dev/null 2>&1
}
# Debian's chromium-headless-shell: the same engine as the chromium package without the
# desktop browser around it, about half the CPU per rendered page (bench/render_floor.py).
# The crawler drives it when present, else the chromium package's browser.
if [ -z "${CHROMIUM_PATH:-}" ] && ! have_headless_shell \
  && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "setup.sh: installing Debian's chromium-headless-shell for JavaScript rendering" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      chromium-headless-shell >/dev/null; } \
    || echo "setup.sh: chromium-headless-shell could not be installed" >&2
fi
if ! have_chromium; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup.sh: installing Chromium (Debian package) for JavaScript rendering" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  fi
  if ! have_chromium; then
    # Not fatal for crawling: without a browser the crawler logs it and does not render.
    echo "setup.sh: Chromium is missing; install Debian's chromium-headless-shell (or" \
      "chromium) package, or set CHROMIUM_PATH, for JavaScript rendering" >&2
  fi
fi
