#!/usr/bin/env bash
# Makes the certificates of a test pool: a certificate authority (CA) and one certificate per node, signed by it,
# as PEM files that selene.pool.tls names (docs/settings.md, docs/operations.md).
#
#   scripts/pool-certs.sh DIR NAME...            a CA in DIR (made once, kept when it exists) and NAME.crt/NAME.key
#                                                for each node name (its identity: the certificate's CN and DNS name)
#   scripts/pool-certs.sh --days N DIR NAME...   node certificates valid for N days (default 365; -1 makes an
#                                                expired one, for tests)
#   scripts/pool-certs.sh --new-ca DIR NAME...   replaces the CA first (a pool that must trust another CA)
#
# Every file is written next to the others in DIR: ca.crt (give it to every node), ca.key (keep it off the nodes),
# NAME.crt (the node's certificate followed by the CA's), NAME.key (its private key, PKCS#8, readable by its owner
# only). Keys are ECDSA P-256. Needs openssl (1.1.1 or newer).
set -euo pipefail

days=365
new_ca=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --days) days="$2"; shift 2 ;;
    --new-ca) new_ca=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    --*) echo "pool-certs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [[ $# -lt 1 ]]; then
  echo "pool-certs.sh: usage: pool-certs.sh [--days N] [--new-ca] DIR NAME..." >&2
  exit 2
fi
dir="$1"; shift
if ! [[ "$days" =~ ^-?[0-9]+$ ]]; then
  echo "pool-certs.sh: --days $days is invalid; allowed: a whole number of days" >&2
  exit 2
fi
mkdir -p "$dir"
umask 077

if [[ $new_ca -eq 1 || ! -f "$dir/ca.crt" || ! -f "$dir/ca.key" ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" -subj "/CN=selene pool CA $(date -u +%Y%m%d%H%M%S)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  chmod 644 "$dir/ca.crt"
  echo "pool-certs.sh: made the CA $dir/ca.crt"
fi

for name in "$@"; do
  if ! [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]]; then
    echo "pool-certs.sh: node name '$name' is invalid; allowed: letters, digits, '.', '_' and '-'" >&2
    exit 2
  fi
  ext=$(mktemp)
  csr=$(mktemp)
  trap 'rm -f "$ext" "$csr"' EXIT
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:%s\n' \
    "$name" > "$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/$name.key.tmp" -out "$csr" \
    -subj "/CN=$name" 2>/dev/null
  openssl x509 -req -in "$csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -sha256 -days "$days" \
    -extfile "$ext" -out "$dir/$name.crt.tmp" 2>/dev/null
  cat "$dir/ca.crt" >> "$dir/$name.crt.tmp"
  # Replaced in one step each, so that a node that re-reads its files mid-way never sees half of one.
  mv -f "$dir/$name.key.tmp" "$dir/$name.key"
  mv -f "$dir/$name.crt.tmp" "$dir/$name.crt"
  chmod 644 "$dir/$name.crt"
  rm -f "$ext" "$csr"
  trap - EXIT
  echo "pool-certs.sh: made $dir/$name.crt and $dir/$name.key (CN=$name, $days days)"
done
