#!/usr/bin/env bash
# Installs what the real-node tests (test/realnode) need from Debian: containerd, runc, the CNI
# plugins (bridge, host-local, loopback), iproute2 (ip netns) and busybox-static (the static
# /bin/busybox that gives the web-server stand-in images a shell and the commands the injected
# init containers run; Debian's dynamic busybox package does not do). Idempotent: it does nothing when
# everything is already there. Needs root; prints why and exits 3 when it cannot install.
set -euo pipefail
need=()
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[ -x /usr/lib/cni/bridge ] || [ -x /opt/cni/bin/bridge ] || need+=(containernetworking-plugins)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v mount >/dev/null 2>&1 || need+=(mount)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' || need+=(busybox-static)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "real-node tests need root to install: ${need[*]}" >&2
  exit 3
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "real-node tests need ${need[*]} and this machine has no apt-get" >&2
  exit 3
fi
echo "==> installing ${need[*]} for the real-node tests"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"; } >/tmp/realnode-apt.log 2>&1; then
  echo "installing ${need[*]} failed; last lines of /tmp/realnode-apt.log:" >&2
  tail -n 20 /tmp/realnode-apt.log >&2
  exit 3
fi
