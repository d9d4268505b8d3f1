/*
 * Unit tests for cap/region: the job's shared VRAM accounting (issue 14).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cap/region.h"
#include "tmpdir.h"

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("cap");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

static cap_region *make(const char *name, uint64_t limit)
{
	char path[512];
	cap_region *r = NULL;
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	assert_int_equal(cap_region_create(path, limit, &r), 0);
	return r;
}

static cap_slot *me(cap_region *r)
{
	cap_slot *s = NULL;
	assert_int_equal(cap_slot_claim(r, getpid(), cap_proc_start_ticks(getpid()), &s), 0);
	return s;
}

static const unsigned char uuid0[16] = {0x5a, 0x1c, 0x2f, 0x7e};

static void test_create_open(void **state)
{
	(void)state;
	char path[512], other[512];
	cap_region *r = NULL, *r2 = NULL;
	snprintf(path, sizeof path, "%s/region", tmpdir);
	assert_int_equal(cap_region_create(path, 0, &r), CAP_EINVAL);
	assert_int_equal(cap_region_create(path, 1 << 20, &r), 0);
	/* O_EXCL: a second job cannot take over (or reset) an existing region */
	assert_int_equal(cap_region_create(path, 1 << 30, &r2), CAP_EIO);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(cap_region_open(path, &r2), 0);
	assert_int_equal(r2->limit_bytes, 1 << 20);
	assert_int_equal(r2->owner_pid, (uint32_t)getpid());
	cap_region_close(r2);
	cap_region_close(r);
	/* not a region: wrong size, then right size with a bad magic */
	snprintf(other, sizeof other, "%s/junk", tmpdir);
	int fd = open(other, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "junk", 4), 4);
	assert_int_equal(cap_region_open(other, &r2), CAP_EBADREG);
	assert_int_equal(ftruncate(fd, sizeof(cap_region)), 0);
	close(fd);
	assert_int_equal(cap_region_open(other, &r2), CAP_EBADREG);
	snprintf(other, sizeof other, "%s/none", tmpdir);
	assert_int_equal(cap_region_open(other, &r2), CAP_EIO);
	assert_string_equal(cap_strerror(CAP_EOVER), "over the VRAM cap");
}

static void test_reserve_saturates(void **state)
{
	(void)state;
	cap_region *r = make("sat", 100);
	cap_slot *s = me(r);
	int d = cap_dev_index(r, uuid0);
	assert_int_equal(d, 0);
	assert_int_equal(cap_dev_index(r, uuid0), 0); /* found, not taken twice */
	assert_int_equal(cap_reserve(r, s, d, 60), 0);
	assert_int_equal(cap_reserve(r, s, d, 50), CAP_EOVER);
	assert_int_equal(cap_reserve(r, s, d, 40), 0);
	assert_int_equal(cap_used(r, d), 100);
	assert_int_equal(cap_reserve(r, s, d, 1), CAP_EOVER);
	/* near 2^64: refused, never wrapped into a small number */
	assert_int_equal(cap_reserve(r, s, d, UINT64_MAX), CAP_EOVER);
	assert_int_equal(cap_reserve(r, s, d, UINT64_MAX - 50), CAP_EOVER);
	assert_int_equal(cap_reserve(r, s, d, UINT64_MAX - 99), CAP_EOVER);
	assert_int_equal(cap_used(r, d), 100);
	assert_int_equal(r->refused, 5);
	/* releasing more than held stops at 0 */
	cap_unreserve(r, s, d, 1000);
	assert_int_equal(cap_used(r, d), 0);
	assert_int_equal(s->alloc_bytes[d], 0);
	cap_unreserve(r, s, d, 1);
	assert_int_equal(cap_used(r, d), 0);
	assert_int_equal(cap_reserve(r, s, d, 100), 0);
	assert_int_equal(cap_reserve(r, s, -1, 1), CAP_EINVAL);
	assert_int_equal(cap_reserve(r, s, CAP_MAX_DEVICES, 1), CAP_EINVAL);
	cap_slot_release(r, s);
	assert_int_equal(cap_used(r, d), 0);
	assert_int_equal(cap_live_slots(r), 0);
	cap_region_close(r);
}

/* A stray free in one process cannot eat what another process holds. */
static void test_unreserve_own_only(void **state)
{
	(void)state;
	cap_region *r = make("own", 100);
	cap_slot *a = me(r), *b = NULL;
	assert_int_equal(cap_slot_claim(r, getppid(), cap_proc_start_ticks(getppid()), &b), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(cap_reserve(r, a, 0, 60), 0);
	assert_int_equal(cap_reserve(r, b, 0, 40), 0);
	cap_unreserve(r, a, 0, 1000);
	assert_int_equal(cap_used(r, 0), 40);
	assert_int_equal(cap_live_slots(r), 2);
	cap_region_close(r);
}

static void test_context_charge(void **state)
{
	(void)state;
	cap_region *r = make("ctx", 1000);
	cap_slot *s = me(r);
	assert_int_equal(cap_reserve(r, s, 0, 100), 0);
	/* the context exists already: charged even when it passes the cap */
	cap_set_ctx(r, s, 0, 950, true);
	assert_int_equal(cap_used(r, 0), 1050);
	assert_int_equal(s->ctx_state[0], CAP_CTX_MEASURED);
	assert_int_equal(cap_reserve(r, s, 0, 1), CAP_EOVER);
	/* a new measurement replaces the old one */
	cap_set_ctx(r, s, 0, 10, true);
	assert_int_equal(cap_used(r, 0), 110);
	assert_int_equal(cap_reserve(r, s, 0, 890), 0);
	assert_int_equal(cap_reserve(r, s, 0, 1), CAP_EOVER);
	cap_set_ctx(r, s, 1, 0, false);
	assert_int_equal(s->ctx_state[1], CAP_CTX_UNKNOWN);
	cap_slot_release(r, s);
	assert_int_equal(cap_used(r, 0), 0);
	cap_region_close(r);
}

/* A child that exits without releasing (as after SIGKILL), and a PID whose
 * start time does not match (reused): both reclaimed with their memory. */
static void test_reclaim_dead(void **state)
{
	(void)state;
	cap_region *r = make("dead", 1000);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		cap_slot *s = NULL;
		if (cap_slot_claim(r, getpid(), cap_proc_start_ticks(getpid()), &s) || cap_reserve(r, s, 0, 700))
			_exit(1);
		_exit(0); /* no release: like a crash */
	}
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(cap_used(r, 0), 700);
	cap_slot *s = me(r); /* claiming reclaims the dead first */
	assert_int_equal(cap_used(r, 0), 0);
	assert_int_equal(r->reclaimed, 1);
	/* our parent's PID with a start time it never had: a reused PID */
	cap_slot *fake = NULL;
	assert_int_equal(cap_slot_claim(r, getppid(), 12345, &fake), 0);
	assert_int_equal(cap_reserve(r, fake, 0, 500), 0);
	assert_int_equal(cap_reserve(r, s, 0, 600), 0); /* refused at first, then the stale lease goes */
	assert_int_equal(cap_used(r, 0), 600);
	assert_int_equal(cap_reclaim(r), 0);
	/* a lease without a start time (unknown when taken) holds while the PID lives */
	cap_slot *nostart = NULL;
	assert_int_equal(cap_slot_claim(r, getppid(), 0, &nostart), 0);
	assert_int_equal(cap_reserve(r, nostart, 0, 100), 0);
	assert_int_equal(cap_reclaim(r), 0);
	assert_int_equal(cap_used(r, 0), 700);
	cap_region_close(r);
}

/* The same process claiming again (after an exec) drops its old lease. */
static void test_reclaim_exec(void **state)
{
	(void)state;
	cap_region *r = make("exec", 1000);
	cap_slot *s = me(r);
	assert_int_equal(cap_reserve(r, s, 0, 800), 0);
	cap_slot *s2 = me(r);
	assert_int_equal(cap_used(r, 0), 0);
	assert_int_equal(cap_live_slots(r), 1);
	assert_int_equal(cap_reserve(r, s2, 0, 800), 0);
	cap_region_close(r);
}

/* A process killed while holding the lock: the next locker recovers the
 * robust mutex and recomputes the totals from the slots. */
static void test_owner_died(void **state)
{
	(void)state;
	cap_region *r = make("owner", 1000);
	cap_slot *s = me(r);
	assert_int_equal(cap_reserve(r, s, 0, 100), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		cap_slot *c = NULL;
		if (cap_slot_claim(r, getpid(), cap_proc_start_ticks(getpid()), &c) || cap_reserve(r, c, 0, 200))
			_exit(1);
		pthread_mutex_lock(&r->lock);
		/* half an update: the slot moved, the device total did not */
		atomic_store(&c->alloc_bytes[0], 300);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(cap_used(r, 0), 300); /* stale total */
	assert_int_equal(cap_reserve(r, s, 0, 50), 0); /* EOWNERDEAD: recomputed, then counted */
	assert_int_equal(cap_used(r, 0), 450);
	assert_int_equal(cap_reclaim(r), 1);
	assert_int_equal(cap_used(r, 0), 150);
	cap_region_close(r);
}

static void test_devices_and_slots_full(void **state)
{
	(void)state;
	cap_region *r = make("full", 1000);
	unsigned char u[16] = {0};
	for (int i = 0; i < CAP_MAX_DEVICES; i++) {
		u[0] = (unsigned char)i;
		assert_int_equal(cap_dev_index(r, u), i);
	}
	u[0] = 0xff;
	assert_int_equal(cap_dev_index(r, u), -1);
	assert_int_equal(cap_dev_find(r, u), -1);
	u[0] = 3;
	assert_int_equal(cap_dev_find(r, u), 3);
	/* every slot leased by a live process (ours, different start times
	 * would be reclaimed, so the same one): the next claim fails */
	uint64_t start = cap_proc_start_ticks(getpid());
	cap_slot *s;
	for (int i = 0; i < CAP_MAX_SLOTS; i++) {
		atomic_store(&r->slots[i].pid, (uint32_t)getppid());
		atomic_store(&r->slots[i].start_ticks, cap_proc_start_ticks(getppid()));
	}
	assert_int_equal(cap_slot_claim(r, getpid(), start, &s), CAP_EFULL);
	cap_region_close(r);
}

static void test_start_ticks(void **state)
{
	(void)state;
	uint64_t a = cap_proc_start_ticks(getpid());
	assert_true(a > 0);
	assert_int_equal(cap_proc_start_ticks(getpid()), a);
	assert_true(cap_proc_start_ticks(1) <= a);
	assert_int_equal(cap_proc_start_ticks(0x7ffffff0), 0);
}

/* Authenticate path from a child process: 0, or CAP_EFORGED with why. */
static int auth_in_child(const char *path, char *why, size_t n)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t c = fork();
	if (c == 0) {
		cap_region *r = NULL;
		char w[256] = "";
		int rc = cap_region_open(path, &r);
		if (!rc)
			rc = cap_region_authenticate(path, r, w, sizeof w);
		ssize_t k = write(p[1], w, strlen(w) + 1);
		(void)k;
		_exit(rc == CAP_EFORGED ? 6 : rc ? 1 : 0);
	}
	close(p[1]);
	ssize_t k = read(p[0], why, n - 1);
	why[k > 0 ? k : 0] = '\0';
	close(p[0]);
	int st;
	assert_int_equal(waitpid(c, &st, 0), c);
	return WEXITSTATUS(st) == 6 ? CAP_EFORGED : -WEXITSTATUS(st);
}

static void test_authenticate(void **state)
{
	(void)state;
	char dir[512], path[512], copy[512], why[256];
	snprintf(dir, sizeof dir, "%s/private", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof path, "%s/region", dir);
	cap_region *r = NULL;
	int fd = -1;
	assert_int_equal(cap_region_create_held(path, 1 << 20, &r, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(r->owner_fd, fd);
	/* the creator's child, the creator holding the file: genuine */
	assert_int_equal(auth_in_child(path, why, sizeof why), 0);
	assert_int_equal(cap_region_authenticate(path, r, why, sizeof why), 0);
	/* a byte-for-byte copy is not the file the creator holds */
	snprintf(copy, sizeof copy, "%s/copy", dir);
	int in = open(path, O_RDONLY), out = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0600);
	static char buf[sizeof(cap_region)];
	assert_int_equal(read(in, buf, sizeof buf), (ssize_t)sizeof buf);
	assert_int_equal(write(out, buf, sizeof buf), (ssize_t)sizeof buf);
	close(in);
	close(out);
	assert_int_equal(auth_in_child(copy, why, sizeof why), CAP_EFORGED);
	assert_non_null(strstr(why, "does not hold it open"));
	/* group or other bits on the file, then on the directory */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(auth_in_child(path, why, sizeof why), CAP_EFORGED);
	assert_non_null(strstr(why, "the file is not private to uid"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(auth_in_child(path, why, sizeof why), CAP_EFORGED);
	assert_non_null(strstr(why, "is not private to uid"));
	assert_int_equal(chmod(dir, 0700), 0);
	/* once the creator lets go of the file, it is no longer authentic */
	close(fd);
	assert_int_equal(auth_in_child(path, why, sizeof why), CAP_EFORGED);
	assert_non_null(strstr(why, "does not hold it open"));
	/* a region whose creator is gone */
	r->owner_pid = 0x7ffffff0;
	assert_int_equal(auth_in_child(path, why, sizeof why), CAP_EFORGED);
	assert_non_null(strstr(why, "is gone"));
	assert_string_equal(cap_strerror(CAP_EFORGED), "not a region this job's supervisor created");
	cap_region_close(r);
	unlink(copy);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_open),
		cmocka_unit_test(test_reserve_saturates),
		cmocka_unit_test(test_unreserve_own_only),
		cmocka_unit_test(test_context_charge),
		cmocka_unit_test(test_reclaim_dead),
		cmocka_unit_test(test_reclaim_exec),
		cmocka_unit_test(test_owner_died),
		cmocka_unit_test(test_devices_and_slots_full),
		cmocka_unit_test(test_start_ticks),
		cmocka_unit_test(test_authenticate),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
