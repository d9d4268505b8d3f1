# report_shot HTML PNG NAME: open the report in headless Chromium, take a
# screenshot and check that it is not blank (sourced by *.t after lib.sh).
report_shot() {
	_chrome=$(command -v chromium || command -v chromium-browser || true)
	if [ -z "$_chrome" ]; then
		skip "$3: chromium is not installed (apt-get install chromium)"
		return
	fi
	timeout 90 "$_chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/chrome-profile" --screenshot="$2" --window-size=1200,900 \
		"file://$1" >"$TMP/chrome.log" 2>&1
	if [ ! -s "$2" ]; then
		ok 1 "$3: chromium wrote a screenshot"
		sed 's/^/#   /' "$TMP/chrome.log" | tail -5
		return
	fi
	_stat=$(python3 "$GW_TOP/tests/e2e/pngstat.py" "$2")
	set -- $_stat "$3"
	# 1200x900 = 1.08 M pixels; text, axes and lines cover well over 1%.
	[ "$3" -gt 10000 ] && [ "$4" -ge 8 ]; ok $? "$5: the screenshot is not blank ($3 non-white pixels, $4 colours)"
}

# cjk_available: a CJK font, chromium and DejaVu (the font set without CJK).
cjk_available() {
	command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh family 2>/dev/null)" ] &&
		command -v chromium >/dev/null 2>&1 && [ -d /usr/share/fonts/truetype/dejavu ]
}

# cjk_shots HTML W,H: draw HTML in headless chromium twice, with this
# machine's fonts and with a fontconfig of DejaVu only (Chinese as tofu
# boxes); prints "INK DIFF": the non-white pixels of the first and the
# pixels where the two differ (-1 when their sizes differ).
cjk_shots() {
	mkdir -p "$TMP/nocjk"
	printf '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>/usr/share/fonts/truetype/dejavu</dir><cachedir>%s/nocjk</cachedir></fontconfig>\n' "$TMP" > "$TMP/nocjk/fonts.conf"
	for _v in cjk tofu; do
		_fc=
		[ "$_v" = tofu ] && _fc=FONTCONFIG_FILE=$TMP/nocjk/fonts.conf
		# shellcheck disable=SC2086
		env HOME="$TMP" $_fc timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--user-data-dir="$TMP/chrome-$_v" --screenshot="$TMP/$_v.png" --window-size="$2" \
			"file://$1" >/dev/null 2>&1
	done
	python3 -c '
import sys; sys.path.insert(0, sys.argv[3])
import pngstat
a = pngstat.decode(sys.argv[1]); b = pngstat.decode(sys.argv[2])
ink = sum(1 for row in a[3] for i in range(0, len(row), a[2]) if row[i:i + 3] != b"\xff\xff\xff")
diff = sum(1 for ra, rb in zip(a[3], b[3]) for i in range(0, len(ra), a[2]) if ra[i:i + 3] != rb[i:i + 3])
print(ink, diff if a[:2] == b[:2] else -1)' "$TMP/cjk.png" "$TMP/tofu.png" "$GW_TOP/tests/e2e" 2>/dev/null
}
