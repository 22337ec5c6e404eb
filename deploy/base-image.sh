#!/bin/sh
# The base image of deploy/Containerfile, made from Debian's own packages: no image registry is needed.
#
#   sh deploy/base-image.sh [IMAGE]      (as root; needs debootstrap and podman: apt-get install debootstrap podman)
#
# debootstrap lays a minimal Debian 12 (bookworm) with Python 3.11 into a temporary folder, and
# `podman import` makes it the image IMAGE (default localhost/mcp-approval-family/debian:bookworm).
# DEBIAN_MIRROR names another mirror (default http://deb.debian.org/debian).
set -eu
image="${1:-localhost/mcp-approval-family/debian:bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
for tool in debootstrap podman; do
    command -v "$tool" >/dev/null 2>&1 || { echo "base-image: $tool is missing: apt-get install $tool" >&2; exit 1; }
done
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" "$mirror" >&2
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$image" >&2
echo "$image"
