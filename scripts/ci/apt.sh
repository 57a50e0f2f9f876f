# Sourced by the ensure-*.sh scripts: installs one Debian package with apt-get, as root or through
# sudo. `apt-get update` runs first only when apt does not know the package yet, and once more if
# the install fails (stale package lists). Fails with a sentence naming what to do when this machine
# has no apt-get or no way to root. Expects the caller's `say` function.

# apt_install PACKAGE HINT — HINT says how to get it without apt-get (e.g. "install Chromium and set CHROMIUM_PATH").
apt_install() {
  local package=$1 hint=$2
  if ! command -v apt-get >/dev/null 2>&1; then
    say "$package is missing and this machine has no apt-get: $hint"
    return 1
  fi
  local sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
      say "$package is missing and installing it needs root (apt-get install $package)"
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show "$package" >/dev/null 2>&1; then
    say "apt-get update (the package lists do not know $package yet)"
    "${sudo_cmd[@]}" apt-get update -qq
  fi
  say "apt-get install $package"
  if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$package" >/dev/null; then
    say "apt-get install $package failed; apt-get update and once more"
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$package" >/dev/null
  fi
}
