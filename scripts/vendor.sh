#!/usr/bin/env bash
# Refresh the browser libraries vendored into grader (no CDN at run time: the pages work offline).
#   htmx     -> grader/web/static/vendor/   (served by `grader serve`)
#   swagger-ui-dist -> grader/serve/static/swagger/   (the API documentation page /docs, served by `grader serve`)
#   axe-core -> tests/web/vendor/           (the accessibility tests only)
# Each comes from the npm registry (`npm pack`), with its licence and a VENDORED.txt that
# records the package, version and SHA-256.
# Usage: scripts/vendor.sh [HTMX_VERSION] [AXE_VERSION] [SWAGGER_UI_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
HTMX=${1:-2.0.11}
AXE=${2:-4.10.3}
SWAGGER=${3:-5.35.0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

vendor() {   # package version file-in-package licence-in-package destination
  local pkg=$1 version=$2 file=$3 licence=$4 dest=$5
  (cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
  local tgz; tgz=$(ls "$tmp"/*.tgz)
  mkdir -p "$tmp/x" "$dest"
  tar -xzf "$tgz" -C "$tmp/x"
  cp "$tmp/x/package/$file" "$dest/$(basename "$file")"
  cp "$tmp/x/package/$licence" "$dest/$(basename "$file" .js).LICENSE.txt"
  {
    echo "package: $pkg"
    echo "version: $version"
    echo "file: $file (from \`npm pack $pkg@$version\`)"
    echo "licence: $(basename "$file" .js).LICENSE.txt"
    echo "sha256: $(sha256sum "$dest/$(basename "$file")" | cut -d' ' -f1)"
  } > "$dest/$(basename "$file" .js).VENDORED.txt"
  rm -rf "$tmp/x" "$tgz"
  echo "vendored $pkg@$version -> $dest/$(basename "$file")"
}

vendor htmx.org "$HTMX" dist/htmx.min.js LICENSE grader/web/static/vendor
vendor axe-core "$AXE" axe.min.js LICENSE tests/web/vendor
for f in swagger-ui-bundle.js swagger-ui.css favicon-32x32.png; do
  vendor swagger-ui-dist "$SWAGGER" "$f" LICENSE grader/serve/static/swagger
done
