#!/bin/sh
# pki.sh DIR (used by run.sh): a test CA, a server cert for 127.0.0.1, a client cert, one from another CA, one expired.
set -e
D=$1
cd "$D"
q() { "$@" >/dev/null 2>&1; }
q openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=sc-test-ca -keyout ca.key -out ca.pem
q openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=sc-other-ca -keyout other.key -out other.pem
q openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout srv.key -out srv.csr
q openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -copy_extensions copy -out srv.pem
q openssl req -newkey rsa:2048 -nodes -subj /CN=sc-client -keyout cli.key -out cli.csr
q openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out cli.pem
q openssl x509 -req -in cli.csr -CA other.pem -CAkey other.key -CAcreateserial -days 2 -out wrongca.pem
mkdir -p ca/new
: >ca/index.txt
echo 1000 >ca/serial
cat >ca.cnf <<CNF
[ ca ]
default_ca = test_ca
[ test_ca ]
database = $D/ca/index.txt
new_certs_dir = $D/ca/new
serial = $D/ca/serial
default_md = sha256
policy = any
[ any ]
commonName = supplied
CNF
q openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in cli.csr -out expired.pem -notext \
  -startdate 20200101000000Z -enddate 20200102000000Z
