/*
 * Fake libnvidia-ml.so.1 of an old driver: no nvmlInit_v2, no _v2/_v3
 * process lists, no nvmlDeviceGetMemoryInfo_v2, no clocks-event reasons,
 * no MIG, no remapped rows, so gpuwise must fall back or report the
 * symbol as missing.
 */
#define FAKE_OLD_DRIVER 1
#include "nvml_body.h"
