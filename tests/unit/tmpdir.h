/*
 * tmpdir.h: one temporary directory per unit-test program, made in
 * setup and removed with its contents in teardown.
 */
#ifndef GW_TEST_TMPDIR_H
#define GW_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

/* Make $TMPDIR/gw-TAG.XXXXXX (or under /tmp); 0 or -1. */
static int tmpdir_make(const char *tag)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/gw-%s.XXXXXX", t && *t ? t : "/tmp", tag);
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Remove the directory and everything in it; 0 or -1. */
static int tmpdir_remove(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
