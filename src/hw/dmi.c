/*
 * dmi.c: the host's memory from its SMBIOS tables: the Memory Device
 * structures (type 17) of /sys/firmware/dmi/tables/DMI (under the root
 * prefix; the kernel makes the file readable by root only).
 *
 * Layout [DMTF DSP0134 3.x, 7.18 Memory Device]: a 4-byte header (type,
 * formatted length, handle), the formatted area, then its strings, each
 * NUL-terminated, the set ended by a second NUL.  Type 17 offsets:
 * 0x04 physical memory array handle, 0x0A data width (bits), 0x0C size
 * (0 empty, 0xFFFF unknown, bit 15 set: KiB, 0x7FFF: see 0x1C), 0x10 device
 * locator and 0x11 bank locator (string numbers), 0x12 memory type, 0x15
 * speed (MT/s), 0x1C extended size (MiB), 0x20 configured memory speed
 * (MT/s, SMBIOS 2.7+), 0x54/0x58 extended speed and extended configured
 * speed (SMBIOS 3.3+, when the WORD says 0xFFFF).  Type 16 (Physical Memory
 * Array) offset 0x05 "use": 0x03 is system memory.
 *
 * Bandwidth: the configured speed (the slowest populated device: the bus
 * runs at it) x the data width of each channel / 8, over the channels
 * [derived: DDR moves 8 bytes per transfer on a 64-bit channel].  Channels
 * are told from the locators ("P0 CHANNEL A", "ChannelB-DIMM1",
 * "CPU1_DIMM_C2", "DIMM_A1"): devices sharing a channel count once; a
 * device whose locators name no channel counts as its own.
 */
#include "hw/hw.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DMI_MAX_BYTES (1u << 20)
#define DMI_MAX_DEVICES 128
#define DMI_MAX_ARRAYS 32

static unsigned u16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static unsigned long u32(const uint8_t *p)
{
	return (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
}

/* SMBIOS memory type byte -> name; NULL for types not worth naming. */
const char *hw_dmi_memory_type_name(unsigned t)
{
	switch (t) {
	case 0x12: return "DDR";
	case 0x13: return "DDR2";
	case 0x18: return "DDR3";
	case 0x1A: return "DDR4";
	case 0x1B: return "LPDDR";
	case 0x1C: return "LPDDR2";
	case 0x1D: return "LPDDR3";
	case 0x1E: return "LPDDR4";
	case 0x22: return "DDR5";
	case 0x23: return "LPDDR5";
	default: return NULL;
	}
}

/* String n (1-based) of a structure whose strings start at s and end before
 * end; "" when absent or unterminated. */
static const char *dmi_string(const uint8_t *s, const uint8_t *end, unsigned n)
{
	if (n == 0)
		return "";
	while (s < end && *s) {
		const uint8_t *z = memchr(s, 0, (size_t)(end - s));
		if (!z)
			return "";
		if (--n == 0)
			return (const char *)s;
		s = z + 1;
	}
	return "";
}

/*
 * The channel a locator names, as a short key: the digits before the word
 * (socket, controller, node) and the letter or digit after "CHANNEL" (or
 * the letter after "DIMM").  false when it names none.
 */
static bool channel_key(const char *loc, char *key, size_t n)
{
	char up[64];
	size_t k = 0;
	for (; loc[k] && k + 1 < sizeof up; k++)
		up[k] = (char)toupper((unsigned char)loc[k]);
	up[k] = 0;
	const char *w = strstr(up, "CHANNEL");
	size_t wl = 7;
	if (!w) {
		w = strstr(up, "DIMM");
		wl = 4;
	}
	if (!w)
		return false;
	const char *a = w + wl;
	while (*a == ' ' || *a == '_' || *a == '-')
		a++;
	/* DIMM: a letter names the channel (DIMM_A1); a bare number does not */
	if (!(isalpha((unsigned char)*a) || (wl == 7 && isdigit((unsigned char)*a))))
		return false;
	size_t o = 0;
	for (const char *p = up; p < w && o + 3 < n; p++)
		if (isdigit((unsigned char)*p))
			key[o++] = *p;
	key[o++] = '/';
	key[o++] = *a;
	key[o] = 0;
	return true;
}

int hw_dmi_memory_parse(const uint8_t *buf, size_t len, hw_host_memory *out, gw_error *err)
{
	memset(out, 0, sizeof *out);
	unsigned arrays[DMI_MAX_ARRAYS];
	size_t n_arrays = 0;
	bool any_array = false;
	struct dev {
		unsigned array, width, type;
		unsigned long mts;
		uint64_t bytes;
		char key[24];
	} devs[DMI_MAX_DEVICES];
	size_t n = 0;

	/* the walk must end at the end-of-table structure or the end of the
	 * data: a lying length lands it in the middle of something else */
	bool ended = false, broken = false;
	size_t off = 0;
	while (off + 4 <= len && !ended) {
		const uint8_t *h = buf + off;
		unsigned type = h[0], flen = h[1];
		/* type 17 is 0x15 to 0x64 bytes long up to SMBIOS 3.7: far beyond is a lie */
		if (flen < 4 || off + flen > len || (type == 17 && flen > 0x80)) {
			broken = true;
			break;
		}
		/* the strings: up to the double NUL */
		size_t s = off + flen, e = s;
		while (e + 1 < len && !(buf[e] == 0 && buf[e + 1] == 0))
			e++;
		if (e + 1 >= len) {
			broken = true;
			break;
		}
		const uint8_t *strs = buf + s, *strend = buf + e + 1;
		if (type == 16 && flen >= 0x06) {
			any_array = true;
			if (h[0x05] == 0x03 && n_arrays < DMI_MAX_ARRAYS)
				arrays[n_arrays++] = u16(h + 0x02);
		} else if (type == 17 && flen >= 0x15 && n < DMI_MAX_DEVICES) {
			struct dev *d = &devs[n];
			unsigned size = u16(h + 0x0C);
			uint64_t bytes = 0;
			if (size == 0x7FFF && flen >= 0x20)
				bytes = (uint64_t)(u32(h + 0x1C) & 0x7FFFFFFFul) << 20;
			else if (size != 0 && size != 0xFFFF)
				bytes = size & 0x8000 ? (uint64_t)(size & 0x7FFF) << 10 : (uint64_t)size << 20;
			if (bytes) {
				d->array = u16(h + 0x04);
				d->bytes = bytes;
				unsigned w = u16(h + 0x0A);
				d->width = w == 0 || w == 0xFFFF || w > 1024 ? 0 : w;
				d->type = h[0x12];
				unsigned long mts = 0;
				if (flen >= 0x22) {
					mts = u16(h + 0x20);
					if (mts == 0xFFFF && flen >= 0x5C)
						mts = u32(h + 0x58) & 0x7FFFFFFFul;
				}
				if ((mts == 0 || mts == 0xFFFF) && flen >= 0x17) {
					mts = u16(h + 0x15);
					if (mts == 0xFFFF && flen >= 0x58)
						mts = u32(h + 0x54) & 0x7FFFFFFFul;
				}
				d->mts = mts == 0xFFFF || mts > 100000 ? 0 : mts;
				const char *dl = dmi_string(strs, strend, h[0x10]);
				const char *bl = flen > 0x11 ? dmi_string(strs, strend, h[0x11]) : "";
				if (!channel_key(bl, d->key, sizeof d->key) && !channel_key(dl, d->key, sizeof d->key))
					snprintf(d->key, sizeof d->key, "#%zu", n);
				n++;
			}
		}
		off = e + 2;
		ended = type == 127;
	}
	if (broken || (!ended && off != len))
		return gw_fail(err, GW_EFORMAT, "the SMBIOS table is malformed (a structure runs past its end)");

	/* system memory only, when the arrays say which is which */
	unsigned long mts = 0;
	unsigned type = 0;
	bool mixed = false;
	const char *keys[DMI_MAX_DEVICES];
	unsigned kwidth[DMI_MAX_DEVICES];
	size_t nk = 0;
	for (size_t i = 0; i < n; i++) {
		const struct dev *d = &devs[i];
		if (any_array) {
			bool sys = false;
			for (size_t a = 0; a < n_arrays && !sys; a++)
				sys = arrays[a] == d->array;
			if (!sys)
				continue;
		}
		out->n_devices++;
		out->total_bytes += d->bytes;
		if (d->mts && (!mts || d->mts < mts))
			mts = d->mts;
		if (!type)
			type = d->type;
		else if (type != d->type)
			mixed = true;
		unsigned w = d->width ? d->width : 64;
		size_t k = 0;
		while (k < nk && strcmp(keys[k], d->key))
			k++;
		if (k == nk) {
			keys[nk] = d->key;
			kwidth[nk++] = w;
		} else if (w > kwidth[k]) {
			kwidth[k] = w;
		}
	}
	for (size_t k = 0; k < nk; k++)
		out->bus_bits += kwidth[k];
	out->channels = (out->bus_bits + 63) / 64;
	out->mts = (uint32_t)mts;
	const char *tn = mixed ? NULL : hw_dmi_memory_type_name(type);
	snprintf(out->type, sizeof out->type, "%s", tn ? tn : "");
	if (!out->n_devices)
		return gw_fail(err, GW_ENOENT, "no populated memory device in the SMBIOS tables");
	if (!out->mts)
		return gw_fail(err, GW_EFORMAT, "the SMBIOS memory devices give no speed");
	out->bandwidth_gbs = (double)out->mts * out->bus_bits / 8.0 / 1000.0;
	return 0;
}

int hw_dmi_memory_read(hw_host_memory *out, gw_error *err)
{
	char *text = NULL;
	size_t len = 0;
	memset(out, 0, sizeof *out);
	int rc = gw_read_file("/sys/firmware/dmi/tables/DMI", true, DMI_MAX_BYTES, &text, &len, err);
	if (rc)
		return rc;
	rc = hw_dmi_memory_parse((const uint8_t *)text, len, out, err);
	free(text);
	return rc;
}
