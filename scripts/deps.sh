#!/bin/sh
# Installs the Debian packages shardcheck builds and tests with, if any is missing.
# Called by the Makefile; safe to run repeatedly (does nothing when all are present).
set -e
PKGS="build-essential pkg-config libgrpc-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler \
libprotobuf-dev libuv1-dev libjansson-dev libcriterion-dev libssl-dev libhiredis-dev libsystemd-dev python3 python3-grpcio python3-protobuf"
[ "$1" = "--test" ] && PKGS="$PKGS mlir-22-tools llvm-22-tools valgrind openssl redis-server nginx systemd procps python3-h2 python3-setuptools python3-pip clang libclang-rt-14-dev flatbuffers-compiler chromium"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# The deployment-manifest validators run on node + npm; a node from elsewhere (which bundles npm) is fine.
[ "$1" = "--test" ] && ! command -v npm >/dev/null 2>&1 && missing="$missing nodejs npm"
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo "
# Say what runs before it runs (sudo may ask for a password): a build that installs packages is a surprise.
echo "shardcheck: missing Debian packages:$missing" >&2
echo "shardcheck: running: ${SUDO}apt-get update && ${SUDO}apt-get install -y$missing" >&2
echo "shardcheck: (to install them yourself instead: interrupt, install, and run make again)" >&2
# One apt-get at a time, whoever else runs this script (make -j, a sanitizer build beside the normal one).
exec 9>"${TMPDIR:-/tmp}/shardcheck-deps.lock"
flock 9
${SUDO}apt-get update -qq
DEBIAN_FRONTEND=noninteractive ${SUDO}apt-get install -y -qq --no-install-recommends $missing >/dev/null
