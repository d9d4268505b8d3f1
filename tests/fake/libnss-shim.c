/*
 * libnss-shim.so: an LD_PRELOAD stand-in for a directory service (LDAP,
 * SSSD).  When FAKE_NSS_NAME is set, getpwuid_r names every uid with it, as
 * NSS would for a user who is not in /etc/passwd; otherwise it passes the
 * call on.  A program that reads /etc/passwd itself never sees the name,
 * so a test can tell the two apart.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

typedef int (*getpwuid_r_fn)(uid_t, struct passwd *, char *, size_t, struct passwd **);

__attribute__((visibility("default"))) int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t n,
						     struct passwd **res)
{
	const char *name = getenv("FAKE_NSS_NAME");
	if (!name) {
		getpwuid_r_fn real;
		*(void **)&real = dlsym(RTLD_NEXT, "getpwuid_r");
		return real ? real(uid, pw, buf, n, res) : ENOSYS;
	}
	size_t len = strlen(name) + 1;
	*res = NULL;
	if (len + 2 > n)
		return ERANGE;
	memcpy(buf, name, len);
	memcpy(buf + len, "", 1);
	memset(pw, 0, sizeof *pw);
	pw->pw_name = buf;
	pw->pw_passwd = buf + len;
	pw->pw_dir = buf + len;
	pw->pw_shell = buf + len;
	pw->pw_gecos = buf + len;
	pw->pw_uid = uid;
	*res = pw;
	return 0;
}
