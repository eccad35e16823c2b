#!/usr/bin/env bash
# Start the Debian PostgreSQL server on 127.0.0.1 and make a `lexgold` role and database for the
# tests. Prints the database URL on its last line. Needs root (it runs as the postgres user).
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
    pg_createcluster "$version" main >/dev/null
fi
pg_ctlcluster "$version" main start 2>/dev/null || true
for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 && break
    sleep 1
done
as_pg() { su postgres -c "$1"; }
as_pg "psql -tAc \"SELECT 1 FROM pg_roles WHERE rolname='lexgold'\"" | grep -q 1 \
    || as_pg "psql -q -c \"CREATE ROLE lexgold LOGIN SUPERUSER PASSWORD 'lexgold'\""
as_pg "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='lexgold_test'\"" | grep -q 1 \
    || as_pg "createdb -O lexgold lexgold_test"
echo "postgresql+psycopg://lexgold:lexgold@127.0.0.1:5432/lexgold_test"
