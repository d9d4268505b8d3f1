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
