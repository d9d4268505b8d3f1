#!/bin/sh
# The README's install line works as root in a container without sudo and
# as a user with sudo (issue 10: it used to call sudo unconditionally, exit
# 127 as root in a container).  apt-get, sudo and make are stand-ins that
# log their arguments; the line itself is taken from README.md as written.
. "$(dirname "$0")/lib.sh"
line=$(grep -E '^    .*apt-get install' "$GW_TOP/README.md" | head -1 | sed 's/^    //')
isnt "$line" "" "README has an install line"
mkdir -p "$TMP/bin"
cat > "$TMP/bin/apt-get" <<'EOF2'
#!/bin/sh
echo "apt-get $1 uid=${FAKE_UID:-0}" >> "$LOG"
EOF2
cat > "$TMP/bin/sudo" <<'EOF2'
#!/bin/sh
echo "sudo" >> "$LOG"
FAKE_UID=0 exec "$@"
EOF2
cat > "$TMP/bin/make" <<'EOF2'
#!/bin/sh
echo "make $*" >> "$LOG"
EOF2
chmod +x "$TMP/bin/apt-get" "$TMP/bin/sudo" "$TMP/bin/make"
mkdir -p "$TMP/root" "$TMP/user"
ln -s "$TMP/bin/apt-get" "$TMP/root/apt-get"
ln -s "$TMP/bin/make" "$TMP/root/make"
for f in apt-get sudo make; do ln -s "$TMP/bin/$f" "$TMP/user/$f"; done

# root in a container: no sudo on PATH
export LOG="$TMP/root.log"
PATH="$TMP/root" /bin/sh -c "$line"
is "$?" 0 "as root without sudo: the line succeeds"
is "$(tr '\n' ' ' < "$LOG")" "apt-get update uid=0 apt-get install uid=0 make run " "  ... apt-get update, install, make run"

# a user with sudo
export LOG="$TMP/user.log"
PATH="$TMP/user" FAKE_UID=1000 /bin/sh -c "$line"
is "$?" 0 "as a user with sudo: the line succeeds"
is "$(tr '\n' ' ' < "$LOG")" "sudo apt-get update uid=0 sudo apt-get install uid=0 make run " \
	"  ... apt-get runs through sudo, make as the user"
done_testing
