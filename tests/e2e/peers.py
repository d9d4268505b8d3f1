#!/usr/bin/env python3
"""Independent NVML clients read the fake libnvidia-ml; their readings are
compared with `gpuwise status --json` field by field (tests/e2e/peers.t).

  peers.py read pynvml|gpustat|nvitop   (run with the venv's python and
      LD_LIBRARY_PATH at a directory whose libnvidia-ml.so.1 is the fake):
      print the client's readings as JSON, keyed like gpuwise's JSON and in
      its units, {"<nvml index>": {field: value}}; null = the client had no
      value (NVML said not supported, or the GPU failed).
  peers.py compare GPUWISE.json CLIENT.json CLIENT SCENARIO
      print one line per field: "CLIENT<TAB>FIELD<TAB>AGREE<TAB>TOTAL", and
      "# mismatch ..." lines for each disagreement.

Units: gpustat rounds memory down to MiB and power down to W, as it prints
them; the comparison rounds gpuwise's values the same way for that client.
"""
import json
import os
import subprocess
import sys

MIB = 1 << 20
COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}


def read_pynvml():
    import pynvml as N
    N.nvmlInit()
    out = {}

    def q(f, *a):
        try:
            return f(*a)
        except N.NVMLError:
            return None

    for i in range(N.nvmlDeviceGetCount()):
        h = N.nvmlDeviceGetHandleByIndex(i)
        g = {}
        name = q(N.nvmlDeviceGetName, h)
        g["name"] = name.decode() if isinstance(name, bytes) else name
        uuid = q(N.nvmlDeviceGetUUID, h)
        g["uuid"] = uuid.decode() if isinstance(uuid, bytes) else uuid
        g["nvml_index"] = q(N.nvmlDeviceGetIndex, h)
        mem = q(N.nvmlDeviceGetMemoryInfo, h, N.nvmlMemory_v2)
        g["memory_total_bytes"] = mem.total if mem else None
        g["memory_used_bytes"] = mem.used if mem else None
        g["memory_reserved_bytes"] = mem.reserved if mem else None
        u = q(N.nvmlDeviceGetUtilizationRates, h)
        g["utilization_gpu_pct"] = u.gpu if u else None
        g["utilization_memory_pct"] = u.memory if u else None
        g["temperature_c"] = q(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU)
        g["fan_pct"] = q(N.nvmlDeviceGetFanSpeed, h)
        p = q(N.nvmlDeviceGetPowerUsage, h)
        g["power_w"] = p / 1000 if p is not None else None
        p = q(N.nvmlDeviceGetEnforcedPowerLimit, h)
        g["power_limit_w"] = p / 1000 if p is not None else None
        g["clock_sm_mhz"] = q(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM)
        g["clock_memory_mhz"] = q(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_MEM)
        g["pcie_tx_kbytes_per_s"] = q(N.nvmlDeviceGetPcieThroughput, h, N.NVML_PCIE_UTIL_TX_BYTES)
        g["pcie_rx_kbytes_per_s"] = q(N.nvmlDeviceGetPcieThroughput, h, N.NVML_PCIE_UTIL_RX_BYTES)
        e = q(N.nvmlDeviceGetEncoderUtilization, h)
        g["encoder_utilization_pct"] = e[0] if e else None
        d = q(N.nvmlDeviceGetDecoderUtilization, h)
        g["decoder_utilization_pct"] = d[0] if d else None
        g["energy_mj"] = q(N.nvmlDeviceGetTotalEnergyConsumption, h)
        g["performance_state"] = q(N.nvmlDeviceGetPerformanceState, h)
        cm = q(N.nvmlDeviceGetComputeMode, h)
        g["compute_mode"] = COMPUTE_MODES.get(cm) if cm is not None else None
        pm = q(N.nvmlDeviceGetPersistenceMode, h)
        g["persistence_mode"] = bool(pm) if pm is not None else None
        mm = q(N.nvmlDeviceGetMigMode, h)
        g["mig_mode"] = bool(mm[0]) if mm else None
        migs = []
        if mm and mm[0]:
            for k in range(q(N.nvmlDeviceGetMaxMigDeviceCount, h) or 0):
                mh = q(N.nvmlDeviceGetMigDeviceHandleByIndex, h, k)
                if mh is None:
                    continue
                mmem = q(N.nvmlDeviceGetMemoryInfo, mh)
                mu = q(N.nvmlDeviceGetUUID, mh)
                migs.append({"gpu_instance_id": q(N.nvmlDeviceGetGpuInstanceId, mh),
                             "uuid": mu.decode() if isinstance(mu, bytes) else mu,
                             "memory_total_bytes": mmem.total if mmem else None,
                             "memory_used_bytes": mmem.used if mmem else None})
        g["mig_devices"] = migs
        procs = {}
        for f in (N.nvmlDeviceGetComputeRunningProcesses, N.nvmlDeviceGetGraphicsRunningProcesses):
            for pr in q(f, h) or []:
                procs.setdefault(str(pr.pid), {})["used_memory_bytes"] = pr.usedGpuMemory
        for s in q(N.nvmlDeviceGetProcessUtilization, h, 0) or []:
            if str(s.pid) in procs:
                procs[str(s.pid)]["sm_utilization_pct"] = s.smUtil
        g["processes"] = procs
        out[str(i)] = g
    N.nvmlShutdown()
    return out


def read_gpustat():
    r = subprocess.run([sys.executable, "-m", "gpustat", "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    out = {}
    for gg in doc["gpus"]:
        g = {"name": gg.get("name"), "uuid": gg.get("uuid"), "temperature_c": gg.get("temperature.gpu"),
             "fan_pct": gg.get("fan.speed"), "utilization_gpu_pct": gg.get("utilization.gpu"),
             "encoder_utilization_pct": gg.get("utilization.enc"),
             "decoder_utilization_pct": gg.get("utilization.dec"),
             "power_w": gg.get("power.draw"), "power_limit_w": gg.get("enforced.power.limit"),
             "memory_used_bytes": gg.get("memory.used"), "memory_total_bytes": gg.get("memory.total")}
        procs = {}
        for p in gg.get("processes") or []:
            procs[str(p["pid"])] = {"used_memory_bytes": p.get("gpu_memory_usage"), "user": p.get("username")}
        g["processes"] = procs
        # a GPU gpustat could not read is an InvalidGPU whose name is the NVML error
        if g["uuid"] is None or (g["name"] or "").startswith("(("):
            g = {"failed": True}
        out[str(gg["index"])] = g
    return out


def read_nvitop():
    from nvitop import Device, NA

    def v(x):
        return None if x is NA or x == "N/A" else x

    out = {}
    for d in Device.all():
        g = {"name": v(d.name()), "uuid": v(d.uuid()), "memory_total_bytes": v(d.memory_total()),
             "memory_used_bytes": v(d.memory_used()), "utilization_gpu_pct": v(d.gpu_utilization()),
             "temperature_c": v(d.temperature()), "fan_pct": v(d.fan_speed()),
             "clock_sm_mhz": v(d.sm_clock()), "clock_memory_mhz": v(d.memory_clock()),
             "pcie_tx_kbytes_per_s": v(d.pcie_tx_throughput()), "pcie_rx_kbytes_per_s": v(d.pcie_rx_throughput()),
             "encoder_utilization_pct": v(d.encoder_utilization()),
             "decoder_utilization_pct": v(d.decoder_utilization())}
        p = v(d.power_usage())
        g["power_w"] = p / 1000 if p is not None else None
        p = v(d.power_limit())
        g["power_limit_w"] = p / 1000 if p is not None else None
        ps = v(d.performance_state())
        g["performance_state"] = int(ps[1:]) if ps else None
        cm = v(d.compute_mode())
        g["compute_mode"] = cm.lower().replace("exclusive thread", "exclusive_thread").replace(
            "exclusive process", "exclusive_process") if cm else None
        mm = v(d.mig_mode())
        g["mig_mode"] = (mm == "Enabled") if mm else None
        g["mig_devices"] = [{"gpu_instance_id": v(m.gpu_instance_id()), "uuid": v(m.uuid()),
                             "memory_total_bytes": v(m.memory_total()), "memory_used_bytes": v(m.memory_used())}
                            for m in (d.mig_devices() if d.is_mig_mode_enabled() else [])]
        procs = {}
        for dev in [d] + (d.mig_devices() if d.is_mig_mode_enabled() else []):
            for pid, pr in dev.processes().items():
                x = procs.setdefault(str(pid), {})
                x["used_memory_bytes"] = v(pr.gpu_memory())
                sm = v(pr.gpu_sm_utilization())
                x["sm_utilization_pct"] = sm
                try:
                    user = v(pr.username())
                except Exception:  # psutil.NoSuchProcess: not a process of this host
                    user = None
                if user and "No Such Process" not in str(user):
                    x["user"] = user
        g["processes"] = procs
        if g["uuid"] is None and g["name"] is None:
            g = {"failed": True}
        out[str(d.index)] = g
    return out


GPU_FIELDS = {
    "pynvml": ["name", "uuid", "memory_total_bytes", "memory_used_bytes", "memory_reserved_bytes",
               "utilization_gpu_pct", "utilization_memory_pct", "temperature_c", "fan_pct", "power_w",
               "power_limit_w", "clock_sm_mhz", "clock_memory_mhz", "pcie_tx_kbytes_per_s", "pcie_rx_kbytes_per_s",
               "encoder_utilization_pct", "decoder_utilization_pct", "energy_mj", "performance_state",
               "compute_mode", "persistence_mode", "mig_mode"],
    "gpustat": ["name", "uuid", "memory_total_bytes", "memory_used_bytes", "utilization_gpu_pct", "temperature_c",
                "fan_pct", "power_w", "power_limit_w", "encoder_utilization_pct", "decoder_utilization_pct"],
    "nvitop": ["name", "uuid", "memory_total_bytes", "memory_used_bytes", "utilization_gpu_pct", "temperature_c",
               "fan_pct", "power_w", "power_limit_w", "clock_sm_mhz", "clock_memory_mhz", "pcie_tx_kbytes_per_s",
               "pcie_rx_kbytes_per_s", "encoder_utilization_pct", "decoder_utilization_pct", "performance_state",
               "compute_mode", "mig_mode"],
}
PROC_FIELDS = {"pynvml": ["used_memory_bytes", "sm_utilization_pct"],
               "gpustat": ["used_memory_bytes", "user"],
               "nvitop": ["used_memory_bytes", "sm_utilization_pct", "user"]}
MIG_FIELDS = ["uuid", "memory_total_bytes", "memory_used_bytes"]


def as_client(client, field, value):
    """gpuwise's value in the client's unit and rounding."""
    if value is None:
        return None
    if client == "gpustat" and field in ("memory_used_bytes", "memory_total_bytes", "used_memory_bytes"):
        return value // MIB
    if client == "gpustat" and field in ("power_w", "power_limit_w"):
        return int(value)
    return value


def compare(gw_file, peer_file, client, scenario):
    gw = json.load(open(gw_file))
    peer = json.load(open(peer_file))
    stats = {}

    def cell(field, ours, theirs, where):
        a, t = stats.setdefault(field, [0, 0])
        same = ours == theirs or (isinstance(ours, (int, float)) and isinstance(theirs, (int, float))
                                  and abs(ours - theirs) < 1e-9)
        stats[field] = [a + same, t + 1]
        if not same:
            print("# mismatch %s %s %s: gpuwise %r, %s %r" % (scenario, where, field, ours, client, theirs))

    gpus = {str(g["nvml_index"]): g for g in gw["gpus"] if g["nvml_index"] is not None}
    cell("gpu_count", len(gpus), len(peer), "machine")
    for idx, g in sorted(gpus.items()):
        p = peer.get(idx)
        if p is None:
            cell("gpu_present", True, False, "gpu%s" % idx)
            continue
        if p.get("failed"):
            # the client could not read this GPU at all: gpuwise must say so too
            cell("gpu_failed", True, bool(g["error"]), "gpu%s" % idx)
            continue
        for f in GPU_FIELDS[client]:
            if f == "name" and g["error"] and p.get(f) is None:
                # NVML cannot name a lost GPU; gpuwise names it from pci.ids
                print("# not compared: %s gpu%s name (lost GPU, gpuwise has %r from pci.ids)" % (scenario, idx, g[f]))
                continue
            cell(f, as_client(client, f, g[f]), p.get(f), "gpu%s" % idx)
        if client != "gpustat":
            theirs = {str(m["gpu_instance_id"]): m for m in p.get("mig_devices", [])}
            ours = {str(m["gpu_instance_id"]): m for m in g["mig_devices"]}
            cell("mig_instances", sorted(ours), sorted(theirs), "gpu%s" % idx)
            for gi in sorted(set(ours) & set(theirs)):
                for f in MIG_FIELDS:
                    cell("mig." + f, ours[gi][f], theirs[gi][f], "gpu%s/gi%s" % (idx, gi))
        ours_p = {str(x["pid"]): x for x in g["processes"]}
        theirs_p = p.get("processes", {})
        # gpustat and nvitop list only processes that exist on this host (they
        # read the host's /proc); in a fixture scenario under a root prefix
        # those are none, and an empty-vs-empty list is not counted
        if client in ("pynvml", "nvitop"):  # nvitop lists them as "No Such Process"
            mine = ours_p
        else:
            mine = {k: v for k, v in ours_p.items() if os.path.exists("/proc/" + k)}
        if mine or theirs_p or client != "gpustat":
            cell("process_pids", sorted(mine), sorted(theirs_p), "gpu%s" % idx)
        for pid in sorted(set(mine) & set(theirs_p)):
            for f in PROC_FIELDS[client]:
                if f in ("user",) and f not in theirs_p[pid]:
                    continue
                if f == "sm_utilization_pct" and client == "nvitop" and mine[pid][f] is None:
                    # nvitop shows 0 for a process without a sample; gpuwise null
                    continue
                cell("process." + f, as_client(client, f, mine[pid][f]), theirs_p[pid].get(f),
                     "gpu%s/pid%s" % (idx, pid))
    for f, (a, t) in stats.items():
        print("%s\t%s\t%d\t%d" % (client, f, a, t))


def main():
    if sys.argv[1] == "read":
        fn = {"pynvml": read_pynvml, "gpustat": read_gpustat, "nvitop": read_nvitop}[sys.argv[2]]
        json.dump(fn(), sys.stdout, indent=1, default=str)
        print()
    elif sys.argv[1] == "compare":
        compare(*sys.argv[2:6])
    else:
        sys.exit("usage: peers.py read CLIENT | compare GPUWISE.json CLIENT.json CLIENT SCENARIO")


if __name__ == "__main__":
    main()
