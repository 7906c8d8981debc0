#!/usr/bin/env bash
# Checks that every DLL a shipped exe imports is one a clean Windows 10 or
# 11 has: scripts/windows/imports.sh EXE... Prints each exe's imports; fails
# naming any other (libssp-0.dll, libgcc_s_seh-1.dll, libwinpthread-1.dll:
# mingw's runtime DLLs, which no Windows carries, are the usual ones).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 EXE..." >&2; exit 2; }
# System DLLs of Windows 10 1607 and later (Go 1.24+ needs 10 anyway):
# the Win32 core, graphics, shell and COM, networking, crypto, and the
# C runtime mingw targets (msvcrt) or the UCRT's API sets.
known='^(kernel32|user32|gdi32|opengl32|advapi32|shell32|shlwapi|ole32|oleaut32|comctl32|comdlg32|ws2_32|winmm|imm32|dwmapi|uxtheme|version|winspool.drv|msvcrt|ntdll|bcrypt|bcryptprimitives|crypt32|secur32|iphlpapi|dnsapi|netapi32|userenv|powrprof|setupapi|cfgmgr32|hid|dinput8|xinput1_4|dxgi|d3d11|uiautomationcore|propsys|shcore|wtsapi32|mswsock|rpcrt4|wininet|winhttp|api-ms-win-[a-z0-9-]+)(\.dll)?$'
status=0
for exe in "$@"; do
	dlls=$(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/^[[:space:]]*DLL Name: //p' | sort -fu)
	[ -n "$dlls" ] || { echo "FAIL $exe: objdump finds no import table" >&2; status=1; continue; }
	echo "$exe imports: $(echo $dlls)"
	while read -r dll; do
		if ! grep -qiE "$known" <<<"$dll"; then
			echo "FAIL $exe imports $dll, which Windows does not have: it would not start" >&2
			status=1
		fi
	done <<<"$dlls"
done
exit $status
