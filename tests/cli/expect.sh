#!/usr/bin/env bash
# Runs one command-line case and checks what a user would see.
#   expect.sh EXIT_CODE REGEX [--no-file PATH] -- COMMAND [ARGS...]
# Passes when COMMAND exits with EXIT_CODE, its stdout+stderr matches the extended REGEX, and (with
# --no-file) PATH does not exist afterwards. The output's lines are joined with " ## " before the
# match, so a REGEX can span lines and ^/$ anchor the whole output. On exit code 2 the output must be one `error:` line.
set -uo pipefail
expected_code=$1; regex=$2; shift 2
no_file=""
if [ "${1:-}" = "--no-file" ]; then no_file=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
[ -n "$no_file" ] && rm -f "$no_file"

output=$("$@" 2>&1)
code=$?
fail() { printf 'FAIL: %s\n  command: %s\n  exit code: %s\n  output:\n%s\n' "$1" "$*" "$code" "$output"; exit 1; }

[ "$code" -eq "$expected_code" ] || fail "expected exit code $expected_code"
joined=$(printf '%s\n' "$output" | awk 'BEGIN { ORS = " ## " } { print }')
printf '%s' "$joined" | grep -Eq -- "$regex" || fail "output does not match /$regex/"
if [ "$expected_code" -eq 2 ]; then
  lines=$(printf '%s\n' "$output" | grep -c .)
  [ "$lines" -eq 1 ] || fail "expected exactly one output line on bad input"
  printf '%s' "$output" | grep -q '^error: ' || fail "expected the line to start with 'error: '"
fi
if [ -n "$no_file" ] && [ -e "$no_file" ]; then fail "$no_file was written"; fi
exit 0
