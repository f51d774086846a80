#!/usr/bin/env bash
# `npm test`: set up the machine, run every test suite, and end with one plain line
# `N passed, N failed` summed over all suites. Exits non-zero if any suite failed to run
# or any test failed. Each suite's full output is also kept in build/test-logs/<suite>.log.
#
# Usage: scripts/test.sh [SUITE...]      (default: all suites in the table below)
#        scripts/test.sh --count KIND LOG (print the counts parsed from a saved log; for checking parsers)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# ---------------------------------------------------------------------------------------------
# The suites. One row each: name | how to read its counts | command (run with bash -c).
# How to read counts:
#   cargo        sum of every "test result: ... N passed; M failed" line; a test binary that
#                started but printed no result line (it crashed) counts as one failure
#   plain        the last line "N passed, N failed" the suite printed itself
#   vitest-json  the JSON report in build/test-logs/<name>.json
#                (run vitest with: --reporter=default --reporter=json --outputFile.json=build/test-logs/<name>.json)
# A suite that exits non-zero but reports no failed test counts as one failure.
SUITES=(
  "cargo    | cargo       | cargo test --workspace --release --no-fail-fast"
  "examples | plain       | python3 scripts/check-examples.py"
  "differential | plain | python3 tests/differential/run.py --random 14:20"
  "conformance | plain | python3 tests/conformance/cli_runner.py --floor tests/conformance/cli-floor.txt"
  "worker   | vitest-json | npx vitest run --config tests/worker/vitest.config.ts --reporter=default --reporter=json --outputFile.json=build/test-logs/worker.json"
  "browser  | vitest-json | npx vitest run --config tests/browser/vitest.config.ts --reporter=default --reporter=json --outputFile.json=build/test-logs/browser.json"
  "clients  | vitest-json | npx vitest run --config tests/clients/vitest.config.ts --reporter=default --reporter=json --outputFile.json=build/test-logs/clients.json"
)
# ---------------------------------------------------------------------------------------------

# Each parser prints "PASSED FAILED" for one suite log.
count_cargo() {
  awk '
    /^[[:space:]]+Running / || /^[[:space:]]+Doc-tests / { started++ }
    /^test result: / {
      results++
      for (i = 1; i <= NF; i++) {
        if ($(i + 1) ~ /^passed;?$/) passed += $i
        if ($(i + 1) ~ /^failed;?$/) failed += $i
      }
    }
    END {
      crashed = started - results
      if (crashed > 0) failed += crashed
      print passed + 0, failed + 0
    }' "$1"
}

count_plain() {
  awk '
    match($0, /(^|^[A-Za-z]+: )[0-9]+ passed, [0-9]+ failed/) {
      line = substr($0, RSTART, RLENGTH); sub(/^[A-Za-z]+: /, "", line)
      split(line, w, /[ ,]+/); passed = w[1]; failed = w[3]; found = 1
    }
    END { if (found) print passed, failed }' "$1"
}

count_vitest_json() {
  local json=build/test-logs/$2.json
  [[ -f $json ]] || return 0
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
           console.log(r.numPassedTests, r.numFailedTests)' "$json"
}

count() { # KIND LOG NAME
  case $1 in
    cargo) count_cargo "$2" ;;
    plain) count_plain "$2" ;;
    vitest-json) count_vitest_json "$2" "$3" ;;
    *) echo "test.sh: unknown count kind '$1'" >&2; return 1 ;;
  esac
}

if [[ ${1:-} == --count ]]; then
  count "$2" "$3" "$(basename "$3" .log)"
  exit
fi

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

bash scripts/setup.sh

mkdir -p build/test-logs
total_passed=0
total_failed=0
summary=()
ran=0

for row in "${SUITES[@]}"; do
  IFS='|' read -r name kind command <<<"$row"
  name=$(trim "$name"); kind=$(trim "$kind"); command=$(trim "$command")
  if (($#)) && [[ " $* " != *" $name "* ]]; then continue; fi
  ran=$((ran + 1))
  log=build/test-logs/$name.log
  rm -f "$log" "build/test-logs/$name.json"

  echo "== suite $name: $command"
  set +e
  bash -c "$command" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e

  read -r passed failed < <(count "$kind" "$log" "$name"; echo) || true
  passed=${passed:-0}
  failed=${failed:-0}
  note=""
  if ((status != 0 && failed == 0)); then
    failed=1
    note=" (exited with status $status and reported no failed test)"
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  summary+=("$(printf '  %-12s %6d passed, %d failed%s' "$name" "$passed" "$failed" "$note")")
done

((ran)) || { echo "test.sh: no suite named: $*" >&2; exit 2; }

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
((total_failed == 0))
