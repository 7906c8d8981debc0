#!/usr/bin/env bash
# make demo-accounts: runs the accounts demo (soak/accounts) inside a
# private D-Bus session with an unlocked gnome-keyring-daemon and a scratch
# HOME, since `carrier login` keeps its tokens only in an OS keychain. The
# person's own keychain and folders are never touched.
#
# usage: soak/accounts/run.sh DEMO_BINARY [flags of the demo]
set -euo pipefail
cd "$(dirname "$0")/../.."

pkgs=(gnome-keyring dbus-daemon)
apt-cache show dbus-daemon >/dev/null 2>&1 || pkgs=(gnome-keyring dbus)
scripts/deps.sh "${pkgs[@]}"

demo=$(realpath "$1")
shift
scratch=$(mktemp -d "${TMPDIR:-/tmp}/carrier-accounts.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home" "$scratch/run"
chmod 700 "$scratch/home" "$scratch/run"

# A non-empty password: with an empty one gnome-keyring writes its file
# unencrypted.
env -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
	-u DBUS_SESSION_BUS_ADDRESS -u GNOME_KEYRING_CONTROL -u CARRIER_TOKEN \
	HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/run" \
	dbus-run-session -- sh -c '
		echo scratch-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1
		exec "$@"
	' sh "$demo" "$@"
