#!/usr/bin/env bash
# Installs Debian's Chromium for the explorer's browser test
# (api/ui TestBrowser, which skips without it). Idempotent.
set -euo pipefail
if command -v chromium >/dev/null; then
	chromium --version; exit 0
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
chromium --version
