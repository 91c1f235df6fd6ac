#!/bin/bash
# The egress proxy's entrypoint: writes squid.conf from the allow-list, then runs Squid in the
# foreground. The rules (see README, "Egress"): CONNECT to port 443 and plain HTTP to port 80, of
# allow-listed names only; never an IP literal; never an address in loopback, link-local or
# private ranges, unless the name is also in SANDBOX_EGRESS_ALLOW_PRIVATE; never the proxy's own
# or the host's addresses. Every request leaves one JSON line on stdout; no path, no query, no
# header.
#
# Usage: egress-proxy.sh            (the container's entrypoint; writes to $EGRESS_RUN_DIR)
#        egress-proxy.sh --check    (validates the two lists only, and prints them normalized)
# Environment:
#   SANDBOX_EGRESS_ALLOW          comma-separated host names; *.example.org is example.org and
#                                 every name under it
#   SANDBOX_EGRESS_ALLOW_PRIVATE  names of that list that may resolve to private addresses
#   SANDBOX_EGRESS_HOST_ADDRESSES the host's addresses (space-separated; make up passes them)
#   EGRESS_LOG_DIR                where the allowed lines are kept besides stdout (a volume only
#                                 the proxy mounts; /var/log/squid)
#   EGRESS_LOG_ROTATE_BYTES       the size past which the health check has that file rotated
set -euo pipefail

readonly port=3128
# Connections the runner may hold to the proxy at once (docs/egress.md).
readonly max_connections=128
run_dir=${EGRESS_RUN_DIR:-/run/egress}
# The allowed lines' own record: a refusal flood (which costs a command nothing) pushes lines out
# of Docker's log ring, never out of this one. 10 files of 10 MiB, about 400,000 lines.
log_dir=${EGRESS_LOG_DIR:-/var/log/squid}
log_rotate_bytes=${EGRESS_LOG_ROTATE_BYTES:-$((10 * 1024 * 1024))}
readonly log_kept_files=9
here=$(cd "$(dirname "$0")" && pwd)

die() {
  echo "egress-proxy: $*" >&2
  exit 2
}

# Lower-case letters, digits and hyphens in dot-separated labels of 1 to 63 characters, or
# "*." and such a name. Nothing else can reach squid.conf: no spaces, quotes or regex syntax.
readonly name_pattern='^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'

# Prints the entries of list $2 (named $1 in messages), one a line, in Squid's dstdomain form
# (*.example.org becomes .example.org); dies naming the first entry that is not a host name.
entries() {
  local variable=$1 list=$2 entry
  local -a items
  [[ "$list" =~ [^[:blank:]] ]] || return 0
  if [[ "$list" == *[[:cntrl:]]* ]]; then
    die "$variable holds a control character (a newline?): give names separated by commas"
  fi
  IFS=, read -r -a items <<<"$list,"
  if [[ "$list" =~ ,[[:blank:]]*$ || "$list" =~ ^[[:blank:]]*, || "$list" =~ ,[[:blank:]]*, ]]; then
    die "$variable has an empty entry (two commas in a row, or one at an end): '$list'"
  fi
  for entry in "${items[@]}"; do
    entry=${entry#"${entry%%[![:blank:]]*}"}
    entry=${entry%"${entry##*[![:blank:]]}"}
    entry=${entry,,}
    if [[ "$entry" =~ ^[0-9.]+$ || "$entry" == *:* || "$entry" == \[* ]]; then
      die "$variable: '$entry' is an IP address; list host names (the proxy never lets IP literals through)"
    fi
    if (( ${#entry} > 253 )) || ! [[ "$entry" =~ $name_pattern ]]; then
      die "$variable: '$entry' is not a host name (letters, digits, hyphens and dots, optionally *. in front)"
    fi
    if [[ "${entry##*.}" =~ ^[0-9]+$ ]]; then
      die "$variable: '$entry' ends in a number; a host name's last label never does"
    fi
    echo "${entry/#\*./.}"
  done
}

# Squid refuses a list in which one entry covers another (example.org and .example.org, or
# a.example.org under .example.org): keeps the first of equal entries and drops covered ones.
widest() {
  awk '{ entry[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) {
        e = entry[i]; keep = !seen[e]++
        for (j = 1; j <= NR && keep; j++) {
          w = entry[j]
          if (j != i && w != e && substr(w, 1, 1) == "." &&
              (e == substr(w, 2) || (length(e) > length(w) && substr(e, length(e) - length(w) + 1) == w))) keep = 0
        }
        if (keep) print e
      }
    }'
}

allow=$(entries SANDBOX_EGRESS_ALLOW "${SANDBOX_EGRESS_ALLOW:-}" | widest)
[[ -n "$allow" ]] || die "SANDBOX_EGRESS_ALLOW is empty: the proxy has nothing to allow (leave it unset for no network)"
private=""
if [[ -n "${SANDBOX_EGRESS_ALLOW_PRIVATE:-}" ]]; then
  private=$(entries SANDBOX_EGRESS_ALLOW_PRIVATE "$SANDBOX_EGRESS_ALLOW_PRIVATE" | widest)
  while read -r name; do
    # Listed, or under a listed *.name: adding it to the list changes nothing.
    [[ "$(printf '%s\n' "$allow" "$name" | widest)" == "$allow" ]] ||
      die "SANDBOX_EGRESS_ALLOW_PRIVATE: '${name/#./*.}' is not in SANDBOX_EGRESS_ALLOW; list it there too"
  done <<<"$private"
fi
[[ "$log_rotate_bytes" =~ ^[1-9][0-9]{0,11}$ ]] || die "EGRESS_LOG_ROTATE_BYTES: '$log_rotate_bytes' is not a size in bytes"
host_addresses=()
for address in ${SANDBOX_EGRESS_HOST_ADDRESSES:-}; do
  [[ "$address" =~ ^[0-9a-fA-F.:]+$ ]] || die "SANDBOX_EGRESS_HOST_ADDRESSES: '$address' is not an IP address"
  host_addresses+=("${address%%%*}")
done

if [[ "${1:-}" == --check ]]; then
  echo "allow: $(paste -sd' ' <<<"$allow")"
  [[ -z "$private" ]] || echo "allow private: $(paste -sd' ' <<<"$private")"
  exit 0
fi

# The network with the default route leads out; the other one is the sandbox's (internal):
# Squid listens only there, so nothing on the outside network can use the proxy.
outside=$(ip -4 route show default | awk '{ print $5; exit }')
gateway=$(ip -4 route show default | awk '{ print $3; exit }')
[[ -n "$outside" ]] || die "no default route: the proxy is not on a network with outbound access"
listen=$(ip -o -4 addr show scope global | awk -v out="$outside" '$2 != out { sub("/.*", "", $4); print $4; exit }')
[[ -n "$listen" ]] || die "no interface besides $outside: the proxy is not on the sandbox's internal network"
own=$(ip -o addr show scope global | awk '{ sub("/.*", "", $4); print $4 }')

[[ "$log_dir" =~ ^/[A-Za-z0-9/._-]+$ ]] || die "EGRESS_LOG_DIR: '$log_dir' is not an absolute path of letters, digits and ._-"
[[ -d "$log_dir" && -w "$log_dir" ]] ||
  die "$log_dir is not a directory this user can write: the allowed lines' record needs it (compose.egress.yaml mounts a volume there)"

mkdir -p "$run_dir"
echo "$listen" >"$run_dir/listen"
# For the health check, which rotates the file past this size (Squid has no rotation by size).
echo "$log_dir/allowed.log $log_rotate_bytes" >"$run_dir/allowed-log"
echo "$allow" >"$run_dir/allow"
# An empty list would be an error in Squid; a name under .invalid never resolves (RFC 6761).
echo "${private:-never.invalid}" >"$run_dir/allow-private"

cat >"$run_dir/squid.conf" <<EOF
# Generated by egress-proxy.sh at container start; do not edit.
http_port $listen:$port
visible_hostname sandbox-mcp-egress
httpd_suppress_version_string on
via off
forwarded_for delete
pid_filename none
cache deny all
cache_mem 8 MB
memory_pools off
netdb_filename none
pinger_enable off
digest_generation off
max_filedescriptors 4096
# The runner may hold $max_connections connections at once and no more (client_db counts them per
# address), and Squid reads at most so much ahead on each: a flood of connections, idle, sending
# large headers, or sending requests back to back and reading no answer (Squid answers one at a
# time and buffers what follows), exhausts neither Squid's memory (the container's 128 MiB) nor
# its descriptors, so Squid keeps serving and the health check's probe (from the proxy's own
# address) still gets in. The buffer must exceed the largest request header. Each tunnel's
# audit line is written when it closes; none stays open longer than an hour. Squid admits one
# connection past client_ip_max_connections (it refuses a new one only when more than that many
# are already open).
client_db on
client_ip_max_connections $((max_connections - 1))
request_header_max_size 64 KB
client_request_buffer_max_size 128 KB
client_lifetime 1 hour
shutdown_lifetime 1 seconds
cache_log stdio:/dev/stderr
cache_store_log none
logfile_rotate 0
error_directory $here/errors
# A path under /squid-internal-static/ is the named host's like any other: Squid would otherwise
# answer it with its own icons, under its own name.
global_internal_static off

acl CONNECT method CONNECT
acl port_443 port 443
acl port_80 port 80
acl plain_http proto HTTP
acl listed dstdomain -n "$run_dir/allow"
acl listed_private dstdomain -n "$run_dir/allow-private"
acl ip_literal dstdom_regex -n ^[0-9.]+\$ :
# IPv6 also holds IPv4 addresses in disguise, each reaching the LAN where the network translates or
# relays them: NAT64 (64:ff9b::/96 and the local 64:ff9b:1::/48), Teredo (2001::/32), 6to4
# (2002::/16) and IPv4-compatible (::/96); besides the discard prefix (100::/64), site-local
# (fec0::/10) and documentation (2001:db8::/32). Squid keeps IPv4 addresses as IPv4-mapped ones
# (so ::ffff:10.0.0.1 is 10.0.0.1 here), and a prefix it reads as all of IPv4 (::ffff:0:0/96,
# ::/96) is dropped from a list that holds an IPv4 range: ::/96 has a list of its own.
acl private_ranges dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.168.0.0/16 198.18.0.0/15 224.0.0.0/3 64:ff9b::/96 64:ff9b:1::/48 100::/64 2001::/32 2001:db8::/32 2002::/16 fc00::/7 fe80::/10 fec0::/10 ff00::/8
acl ipv4_compatible dst ::/96
acl private_address any-of private_ranges ipv4_compatible
# Any address at all: a listed name that resolves to none would otherwise match no dst rule below.
acl resolves dst all
# 0.0.0.0/8 and :: stand for this host (a connection to 0.0.0.0 reaches the proxy's own ports).
acl own_address dst 0.0.0.0/8 :: 127.0.0.0/8 ::1 $(printf '%s\n' "$own" "$gateway" "${host_addresses[@]}" | sort -u | paste -sd' ')

# Each refusal's reason: its log field and its error page (deny_info names the line's last ACL).
acl refused_ip_literal annotate_transaction egress=refused:ip-literal
acl refused_port annotate_transaction egress=refused:port
acl refused_method annotate_transaction egress=refused:method
acl refused_not_listed annotate_transaction egress=refused:not-listed
acl refused_own_address annotate_transaction egress=refused:proxy-or-host-address
acl refused_private annotate_transaction egress=refused:private-address
acl refused_no_address annotate_transaction egress=refused:no-address
acl allowed annotate_transaction egress=allowed
deny_info ERR_EGRESS_IP_LITERAL refused_ip_literal
deny_info ERR_EGRESS_PORT refused_port
deny_info ERR_EGRESS_METHOD refused_method
deny_info ERR_EGRESS_NOT_LISTED refused_not_listed
deny_info ERR_EGRESS_OWN_ADDRESS refused_own_address
deny_info ERR_EGRESS_PRIVATE refused_private
deny_info ERR_EGRESS_NO_ADDRESS refused_no_address

http_access deny ip_literal refused_ip_literal
# Squid answers these itself (its cache, a trace), so a line for one would never mean traffic out.
acl proxy_methods method PURGE TRACE
http_access deny proxy_methods refused_method
http_access deny CONNECT !port_443 refused_port
http_access deny !CONNECT !port_80 refused_port
http_access deny !CONNECT !plain_http refused_port
http_access deny !listed refused_not_listed
http_access deny !resolves refused_no_address
http_access deny own_address refused_own_address
http_access deny !listed_private private_address refused_private
http_access allow allowed
http_access deny all

logformat egress {"time":"%{%Y-%m-%dT%H:%M:%S}tg.%03tuZ","event":"egress","method":"%"rm","host":"%">rd","port":"%">rP","decision":"%"{egress}note","status":%>Hs,"bytes_out":%>st,"bytes_in":%<st,"duration_ms":%tr}
# The health check's probes (from the proxy's own address: a container without capabilities
# cannot forge it) stay out of the audit.
acl health_probe src $listen
access_log stdio:/dev/stdout logformat=egress !health_probe
# The allowed lines again, in a file no command can reach: the record of what left.
acl allowed_line note egress allowed
access_log stdio:$log_dir/allowed.log logformat=egress rotate=$log_kept_files allowed_line
EOF

echo "egress-proxy: listening on $listen:$port; allowed: $(paste -sd' ' "$run_dir/allow"); private allowed: $(paste -sd' ' <<<"${private:--}")" >&2
exec squid -N -f "$run_dir/squid.conf"
