# Applied to Debian's /etc/profile in the base image. That file runs in front of every
# run_command (`/bin/sh -lc`), and its `$(id -u)` costs a fork and an exec, about 3 ms of a
# 5 ms login shell here. The uid is read from /proc/self/status with shell builtins instead;
# everything else in the file is unchanged.
1i\
# sandbox-mcp: the uid without forking id(1) (this file runs in front of every command).\
while read -r profile_key profile_uid profile_rest; do [ "$profile_key" = "Uid:" ] && break; done < /proc/self/status
s/"\$(id -u)"/"$profile_uid"/g
$a\
unset profile_key profile_uid profile_rest
# Debian 13 lists /etc/profile.d with run-parts(8), another fork and exec per command; a glob
# of the same files (the names run-parts accepts, in the same order) costs nothing.
s|for i in $(run-parts --list --regex '^\[a-zA-Z0-9_\]\[a-zA-Z0-9._-\]\*\\\.sh$' /etc/profile.d); do|for i in /etc/profile.d/*.sh; do|
