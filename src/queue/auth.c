/*
 * queue/auth: who a client is (SO_PEERCRED) and what it may do: user
 * names, group and project membership, administrators.
 */
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "queue/daemon_int.h"

/* ---- users and groups --------------------------------------------------- */
static bool user_in_group(uid_t uid, gid_t gid, const char *group)
{
	struct group *g = getgrnam(group);
	if (!g)
		return false;
	if (g->gr_gid == gid)
		return true;
	struct passwd *pw = getpwuid(uid);
	if (!pw)
		return false;
	gid_t groups[256];
	int n = 256;
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
		n = 256;
	for (int i = 0; i < n; i++)
		if (groups[i] == g->gr_gid)
			return true;
	return false;
}

bool qd_is_admin(qd *d, const client *c)
{
	if (c->uid == 0 || (!d->root && c->uid == d->self_uid))
		return true;
	return d->cfg.admin_group[0] && user_in_group(c->uid, c->gid, d->cfg.admin_group);
}

char *qd_user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	return pw ? xstrdup(pw->pw_name) : xasprintf("%u", (unsigned)uid);
}

/* Does "alice,@lab" name this user?  An empty list is everyone. */
bool qd_member_of(const char *members, uid_t uid, gid_t gid)
{
	if (!members || !*members)
		return true;
	char *copy = xstrdup(members), *sp = NULL;
	char *name = qd_user_name(uid);
	bool yes = false;
	for (char *m = strtok_r(copy, ",", &sp); m && !yes; m = strtok_r(NULL, ",", &sp)) {
		m = str_trim(m);
		if (*m == '@')
			yes = user_in_group(uid, gid, m + 1);
		else
			yes = strcmp(m, name) == 0;
	}
	free(copy);
	free(name);
	return yes;
}

bool qd_may_touch(qd *d, const client *c, const job *j)
{
	return j->spec.uid == c->uid || qd_is_admin(d, c);
}

/* The kernel's word for who is at the other end of c->fd: 0, or -1. */
int qd_peer_cred(client *c)
{
	struct ucred cr;
	socklen_t l = sizeof cr;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0)
		return -1;
	c->uid = cr.uid;
	c->gid = cr.gid;
	c->pid = cr.pid;
	return 0;
}

/* A personal queue serves its owner and root; the system queue everyone. */
bool qd_peer_allowed(qd *d, const client *c)
{
	return d->root || c->uid == d->self_uid || c->uid == 0;
}
