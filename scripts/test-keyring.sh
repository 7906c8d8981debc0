#!/usr/bin/env bash
# Runs the keychain tests (go test -tags keyring) against a real Secret
# Service: a private D-Bus session with an unlocked gnome-keyring-daemon and
# a scratch HOME, so the person's own keychain is never touched and the
# scratch HOME can be searched for tokens afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

# dbus-run-session is in dbus-daemon on Debian 12 (in dbus on older ones).
pkgs=(gnome-keyring libsecret-tools dbus-daemon)
apt-cache show dbus-daemon >/dev/null 2>&1 || pkgs=(gnome-keyring libsecret-tools dbus)
scripts/deps.sh "${pkgs[@]}"

# The scratch HOME must not take the Go caches with it: a cold build cache
# would make this a long run.
export GOCACHE="$($GO env GOCACHE)" GOMODCACHE="$($GO env GOMODCACHE)" GOPATH="$($GO env GOPATH)"
export GOFLAGS="$($GO env GOFLAGS)" GOTOOLCHAIN=local

scratch=$(mktemp -d "${TMPDIR:-/tmp}/carrier-keyring.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home" "$scratch/run"
chmod 700 "$scratch/home" "$scratch/run"

# A non-empty password: with an empty one gnome-keyring writes its file
# unencrypted, and the scan for tokens would rightly fail.
env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
	-u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL \
	HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/run" CARRIER_KEYRING_TEST=1 \
	dbus-run-session -- sh -c '
		echo scratch-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1
		exec "$0" test ${KEYRING_TEST_FLAGS:-} -race -count=1 -tags keyring -run "^TestKeyring" ./auth/ ./cli/
	' "$GO"
