#!/bin/sh
# gpuwise status --serve: a real HTTP endpoint, scraped with a real client
# (curl), its output checked by Prometheus's promtool, and the queries of
# dcgm-exporter's Grafana dashboard evaluated against a real scrape.
. "$(dirname "$0")/lib.sh"

NVML=$GW_FAKE/libnvidia-ml.so
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWISE_FAKE_CLOCK GPUWISE_FAKE_LOG
export GPUWISE_ROOT="$FIX/roots/server-8xh100" GPUWISE_FAKE_SCENARIO="$FIX/scenarios/server-8xh100.json"
export GPUWISE_NVML_LIB="$NVML"

have() { command -v "$1" >/dev/null 2>&1; }

# start_server OUTFILE ARGS...: start gpuwise status --serve in the background;
# sets $spid and $port (empty when it did not come up within 10 s)
start_server() {
	f=$1
	shift
	"$GW" status "$@" > "$f" 2>"$f.err" &
	spid=$!
	port=$(serve_port "$f" "$spid")
}
stop_server() {
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	src=$?
}

if ! have curl; then
	skip "curl not installed (.ci/run installs it)"
	done_testing
	exit $?
fi

# ---- usage -----------------------------------------------------------------------
run_gw status --serve nonsense
is "$rc" 2 "--serve without a port: exit 2"
like "$err" "ADDR:PORT" "--serve: the form is named"
run_gw status --serve 127.0.0.1:99999
is "$rc" 2 "--serve port out of range: exit 2"
run_gw status --serve 127.0.0.1:0 --json
is "$rc" 2 "--serve with --json: exit 2"
GPUWISE_MHD_LIB=/nonexistent/libmicrohttpd.so.12 run_gw status --serve 127.0.0.1:0
is "$rc" 1 "--serve without libmicrohttpd: exit 1"
like "$err" "cannot load '/nonexistent/libmicrohttpd.so.12'" "--serve without libmicrohttpd: says so"

# ---- a real endpoint ---------------------------------------------------------------
start_server "$TMP/serve.out" --serve 127.0.0.1:0
[ -n "$port" ]; ok $? "--serve 127.0.0.1:0 listens and says where (port $port)"
url=http://127.0.0.1:$port
code=$(curl -s -o "$TMP/scrape.txt" -D "$TMP/headers.txt" -w '%{http_code}' "$url/metrics")
is "$code" 200 "GET /metrics: 200"
like "$(cat "$TMP/headers.txt")" '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "GET /metrics: exposition format content type"
scrape=$(cat "$TMP/scrape.txt")
like "$scrape" '^DCGM_FI_DEV_GPU_TEMP\{gpu="3",[^}]*\} 86$' "scrape: dcgm-exporter names by default"
like "$scrape" '^gpuwise_nvml_up\{[^}]*\} 1$' "scrape: health gauge"
is "$(curl -s -o /dev/null -w '%{http_code}' "$url/nope")" 404 "GET /nope: 404"
is "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$url/metrics")" 405 "DELETE /metrics: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' --data-binary 'x=1' "$url/metrics")" 405 "POST with a body: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' -I "$url/metrics")" 200 "HEAD /metrics: 200"
is "$(curl -s -o /dev/null -w '%{http_code}' "$url/")" 200 "GET /: 200 (points at /metrics)"
# python's urllib as a second client: the same series
py=$(python3 -c 'import sys, urllib.request; print(sum(1 for l in urllib.request.urlopen(sys.argv[1]).read().decode().splitlines() if l.startswith("DCGM_FI_DEV_GPU_TEMP{")))' "$url/metrics")
is "$py" 8 "python urllib: 8 GPU temperature series"
curl -s "$url/metrics" -o "$TMP/scrape2.txt"
curl -s "$url/metrics" -o "$TMP/scrape3.txt"
stop_server
is "$src" 0 "SIGTERM: the server stops, exit 0"
is "$(grep -c '^DCGM_FI_DEV_GPU_TEMP{' "$TMP/scrape3.txt")" 8 "repeated scrapes keep answering"

# ---- promtool check metrics -----------------------------------------------------------
if have promtool; then
	lint=$(promtool check metrics < "$TMP/scrape.txt" 2>&1); prc=$?
	# rc 1 = a parse error; 3 = lint findings only.  dcgm-exporter's own
	# names draw two: its camelCase labels (modelName) and counters without
	# _total (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION ...); nothing else may appear.
	[ "$prc" -eq 0 ] || [ "$prc" -eq 3 ]; ok $? "promtool check metrics parses the dcgm scrape (rc $prc)"
	other=$(printf '%s\n' "$lint" | grep -v -e "label names should be written in 'snake_case' not 'camelCase'" \
		-e 'counter metrics should have "_total" suffix' -e '^$' || true)
	is "$other" "" "promtool: no finding beyond dcgm-exporter's own naming"
	start_server "$TMP/serve-own.out" --serve 127.0.0.1:0 --prometheus-names gpuwise
	curl -s "http://127.0.0.1:$port/metrics" -o "$TMP/own.txt"
	stop_server
	lint=$(promtool check metrics < "$TMP/own.txt" 2>&1); prc=$?
	is "$prc" 0 "promtool check metrics: --prometheus-names gpuwise is clean (rc 0)"
	is "$lint" "" "promtool: no lint finding for gpuwise names"
	like "$(cat "$TMP/own.txt")" '^gpuwise_gpu_energy_joules_total\{gpu="3",[^}]*\} 4003000$' "gpuwise names: energy counter in joules"
else
	skip "promtool not installed (.ci/run installs Debian's prometheus package)"
fi

# ---- dcgm-exporter's Grafana dashboard against the scrape ------------------------------
if have promtool; then
	run_gw status --json
	printf '%s\n' "$out" > "$TMP/status.json"
	for sel in '.*' 3; do
		python3 "$GW_TOP/tests/e2e/dashboard.py" "$FIX/dcgm/dashboard-queries.tsv" "$TMP/scrape.txt" \
			"$TMP/status.json" "127.0.0.1:$port" "$sel" "$TMP/dash.yml" > "$TMP/dash.txt"; drc=$?
		is "$drc" 0 "dashboard (\$gpu=$sel): unit-test file written from the scrape"
		res=$(promtool test rules "$TMP/dash.yml" 2>&1); prc=$?
		is "$prc" 0 "dashboard (\$gpu=$sel): promtool test rules passes: every query returns the expected series"
		[ "$prc" -eq 0 ] || printf '%s\n' "$res" | head -30 | sed 's/^/# /'
		while IFS="$(printf '\t')" read -r panel n; do
			diag "dashboard \$gpu=$sel: $panel: $n series"
		done < "$TMP/dash.txt"
		answered=$(awk -F '\t' '$2 > 0' "$TMP/dash.txt" | wc -l | tr -d ' ')
		is "$answered" 7 "dashboard (\$gpu=$sel): 7 of 8 panels return series (not the tensor-core profiling panel)"
		like "$(cat "$TMP/dash.txt")" "^Tensor Core Utilization	0$" "dashboard: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (profiling, not in NVML) is empty"
	done
	is "$(awk -F '\t' '$1 == "GPU Framebuffer Mem Used" {print $2}' "$TMP/dash.txt")" 1 "dashboard \$gpu=3: one framebuffer series"
	# the checker is not a rubber stamp: a wrong expected value fails
	sed 's/^\(            value: \)86$/\187/' "$TMP/dash.yml" > "$TMP/dash-wrong.yml"
	cmp -s "$TMP/dash.yml" "$TMP/dash-wrong.yml"; ok $((!$?)) "a wrong expectation was planted (86 -> 87)"
	promtool test rules "$TMP/dash-wrong.yml" > /dev/null 2>&1; ok $((!$?)) "promtool rejects the planted wrong value"
else
	skip "promtool not installed: the dashboard queries cannot be evaluated"
fi

# ---- fresh readings per scrape, and a broken NVML over HTTP -------------------------------
cat > "$TMP/heat.json" <<'EOF'
{"driver_version": "570.124.06", "gpus": [{"name": "NVIDIA GeForce RTX 4090",
 "uuid": "GPU-5a1c2f7e-0d4b-4c39-9e61-1f2a3b4c5d6e", "pci_bus_id": "00000000:01:00.0",
 "memory_total_bytes": 25757220864, "temp_c": {"calls": [60, 70, 80]}}]}
EOF
export GPUWISE_ROOT="$FIX/roots/desktop-4090" GPUWISE_FAKE_SCENARIO="$TMP/heat.json"
start_server "$TMP/heat.out" --serve 127.0.0.1:0
t1=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^DCGM_FI_DEV_GPU_TEMP{.*} //p')
t2=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^DCGM_FI_DEV_GPU_TEMP{.*} //p')
stop_server
is "$t1 $t2" "70 80" "each scrape reads NVML afresh (60 was the check at start-up)"

python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["errors"]={"nvmlInit_v2": "DRIVER_NOT_LOADED"}; json.dump(d, open(sys.argv[2],"w"))' \
	"$FIX/scenarios/desktop-4090.json" "$TMP/noinit.json"
export GPUWISE_FAKE_SCENARIO="$TMP/noinit.json"
start_server "$TMP/broken.out" --serve 127.0.0.1:0
body=$(curl -s "http://127.0.0.1:$port/metrics")
stop_server
like "$body" '^gpuwise_nvml_up\{[^}]*state="failed",error="cannot initialise NVML: Driver Not Loaded \(NVML error 9\)"\} 0$' \
	"broken NVML: the endpoint still answers, health gauge 0 with the reason"
unlike "$body" '^DCGM_FI_DEV_GPU_TEMP' "broken NVML: no made-up readings"
like "$(cat "$TMP/broken.out.err")" "^gpuwise: NVML cannot be used: cannot initialise NVML" "broken NVML: said on stderr at start-up"

# a port already taken: exit 1 with the address named
export GPUWISE_FAKE_SCENARIO="$FIX/scenarios/desktop-4090.json"
start_server "$TMP/first.out" --serve 127.0.0.1:0
run_gw status --serve "127.0.0.1:$port"
is "$rc" 1 "a port in use: exit 1"
like "$err" "cannot listen on '127.0.0.1:$port'" "a port in use: named"
stop_server

done_testing
