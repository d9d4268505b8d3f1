/*
 * Fake libnvidia-ml.so.1 of a current driver (every symbol gpuwise uses,
 * versioned ones included), driven by GPUWISE_FAKE_SCENARIO.
 */
#include "nvml_body.h"
