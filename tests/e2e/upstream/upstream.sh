#!/bin/sh
# The e2e upstream's entrypoint: a web page and a git repository over HTTP (port 80) and HTTPS
# (port 443, a self-signed certificate for the names given as arguments, written to
# /srv/cert.pem for the test to trust).
# Usage: upstream.sh NAME...
set -eu
mkdir -p /srv/www/cgi-bin /srv/git
echo "upstream says hello" >/srv/www/index.html
# A repository with one commit, served by git's smart-HTTP backend at /cgi-bin/git/repo.git.
git init -q -b main /srv/src
git -C /srv/src -c user.name=upstream -c user.email=upstream@example.invalid commit -q --allow-empty -m "the upstream's commit"
git clone -q --bare /srv/src /srv/git/repo.git
cat >/srv/www/cgi-bin/git <<'CGI'
#!/bin/sh
GIT_PROJECT_ROOT=/srv/git GIT_HTTP_EXPORT_ALL=1 exec git http-backend
CGI
chmod 0755 /srv/www/cgi-bin/git
# Counts the bytes a request sends: an upload's way through the proxy.
cat >/srv/www/cgi-bin/count <<'CGI'
#!/bin/sh
printf 'Content-Type: text/plain\r\n\r\n'
wc -c | tr -d ' '
CGI
chmod 0755 /srv/www/cgi-bin/count
san=$(printf 'DNS:%s,' "$@")
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" -addext "subjectAltName=${san%,}" \
  -keyout /srv/key.pem -out /srv/cert.pem 2>/dev/null
cat /srv/key.pem /srv/cert.pem >/srv/tls.pem
busybox httpd -p 80 -h /srv/www
echo "upstream: ready"
exec socat openssl-listen:443,reuseaddr,fork,cert=/srv/tls.pem,verify=0 tcp:127.0.0.1:80
