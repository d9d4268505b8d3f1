/*
 * hw_weak.c: weak stand-ins for the hardware layer until src/hw/ lands;
 * the real definitions override these at link time.
 */
#include "hw/hw.h"

#include <string.h>

__attribute__((weak)) hw *hw_open(const hw_opts *o, gw_error *err)
{
	gw_fail(err, GW_ENOTSUP, "the hardware layer is not built in");
	return NULL;
}

__attribute__((weak)) int hw_sample(hw *h, hw_snapshot *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	return gw_fail(err, GW_ENOTSUP, "the hardware layer is not built in");
}

__attribute__((weak)) void hw_snapshot_release(hw_snapshot *s)
{
}

__attribute__((weak)) void hw_close(hw *h)
{
}

__attribute__((weak)) const char *hw_throttle_words(uint64_t bits, char *buf, size_t n)
{
	snprintf(buf, n, "thermal slowdown");
	return buf;
}

__attribute__((weak)) int hw_xid_read(const char *path, uint64_t since_us, hw_xid **out, size_t *n,
				      gw_error *err)
{
	*out = NULL;
	*n = 0;
	return gw_fail(err, GW_ENOTSUP, "the hardware layer is not built in");
}
