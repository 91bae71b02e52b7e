#!/bin/sh
# Draws the web center's PNG icons (the web app manifest's 192 and 512 pixel icons and the 512
# pixel maskable one) from the one source drawing, Web/icon.svg, with headless Chromium (the
# browser the web tests use: scripts/install-deps.sh test). Run after editing Web/icon.svg, then
# scripts/generate-web-assets.sh; the PNGs are committed, so serving needs nothing at run time.
#
# Maskable: the drawing is scaled to 118% over a square of its own gradient, so its rounded
# corners fall outside and the bell and dot stay inside the 80% circle every mask keeps.
set -eu
cd "$(dirname "$0")/.."
command -v chromium >/dev/null 2>&1 || { echo "make-icons: chromium is missing; run scripts/install-deps.sh test" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp Web/icon.svg "$work/icon.svg"
cat > "$work/any.html" <<'HTML'
<!doctype html><html><head><style>
html, body { margin: 0; background: transparent; }
img { display: block; width: 100vw; height: 100vh; }
</style></head><body><img src="icon.svg" alt=""></body></html>
HTML
cat > "$work/maskable.html" <<'HTML'
<!doctype html><html><head><style>
html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; background: linear-gradient(135deg, #7b6cf6, #4f46c8); }
img { display: block; position: absolute; width: 118vw; height: 118vh; left: -9vw; top: -9vh; }
</style></head><body><img src="icon.svg" alt=""></body></html>
HTML
draw() { # page size output
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
        --default-background-color=00000000 --window-size="$2,$2" --screenshot="$3" "file://$work/$1" >/dev/null 2>&1
    [ -s "$3" ] || { echo "make-icons: chromium drew no $3" >&2; exit 1; }
}
draw any.html 192 Web/icon-192.png
draw any.html 512 Web/icon-512.png
draw maskable.html 512 Web/icon-maskable-512.png
echo "make-icons: Web/icon-192.png Web/icon-512.png Web/icon-maskable-512.png"
