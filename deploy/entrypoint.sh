#!/bin/sh
# Secrets from files: for each setting below, NAME_FILE names a file whose content (one line, the
# trailing newline dropped) becomes NAME. Setting both NAME and NAME_FILE is refused. Then the
# command runs (default: caldav-mcp) with MCP_TRANSPORT=streamable-http unless it was set.
set -eu
for name in CALDAV_PASSWORD CARDDAV_PASSWORD NTFY_TOKEN NTFY_PASSWORD APPROVAL_STORE_URL; do
    file="$(printenv "${name}_FILE" || true)"
    [ -n "$file" ] || continue
    if [ -n "$(printenv "$name" || true)" ]; then
        echo "entrypoint: both $name and ${name}_FILE are set: keep one" >&2
        exit 1
    fi
    if [ ! -r "$file" ]; then
        echo "entrypoint: ${name}_FILE names $file, which this user cannot read" >&2
        exit 1
    fi
    value="$(cat "$file")"
    export "$name=$value"
    unset "${name}_FILE"
done
exec "$@"
