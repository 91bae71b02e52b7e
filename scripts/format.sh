#!/usr/bin/env bash
# The project's Swift formatting: swift-format (it ships with the toolchain) with the configuration in
# .swift-format. `scripts/format.sh` rewrites every Swift file in place; `scripts/format.sh --check`
# (run by `make test`) changes nothing and fails, naming each file and line, where a file is not
# formatted or breaks one of the configuration's rules. Generated files carry
# `// swift-format-ignore-file`; symbolic links (the fuzz targets' shared sources) are formatted
# where they point.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
command -v swift-format >/dev/null || {
    echo "format: swift-format not found (it ships with the Swift toolchain; expected in /opt/swift/usr/bin)" >&2
    exit 1
}
mapfile -t files < <(find Package.swift Sources Tests Benchmarks Examples Fuzz Plugins \
    -name '*.swift' -type f -not -path '*/.build/*' | sort)
case "${1:-}" in
    --check)
        if ! swift-format lint --strict --parallel "${files[@]}"; then
            echo "format: the files above are not formatted; run scripts/format.sh (or make format)" >&2
            exit 1
        fi
        echo "format: ${#files[@]} Swift files formatted and within the rules of .swift-format"
        ;;
    "")
        swift-format format --in-place --parallel "${files[@]}"
        ;;
    *)
        echo "usage: scripts/format.sh [--check]" >&2
        exit 2
        ;;
esac
