#!/usr/bin/env bash
# HumanEval (../shared/data/HumanEval.jsonl.gz): every problem's prompt + canonical solution
# + tests + check(entry_point) runs through `corral run --lang python -`, and all 164 must
# pass; solutions that are wrong must be reported as failed. PASS/FAIL/SKIP lines.
set -u
C=${1:?usage: humaneval_test.sh path/to/corral}
top=$(cd "$(dirname "$0")/../.." && pwd)
data=${HUMANEVAL:-$top/../shared/data/HumanEval.jsonl.gz}
[ "$(id -u)" -eq 0 ] || { echo "SKIP humaneval: needs root for the native backend"; exit 0; }
[ -f "$data" ] || { echo "SKIP humaneval: $data not found"; exit 0; }

/usr/bin/python3 - "$C" "$data" <<'PY'
import gzip, json, subprocess, sys
corral, data = sys.argv[1], sys.argv[2]
problems = [json.loads(l) for l in gzip.open(data, "rt")]

def run(program):
    p = subprocess.run([corral, "run", "--lang", "python", "--timeout", "20000", "-"],
                       input=program.encode(), capture_output=True)
    return p.returncode, p.stderr.decode(errors="replace")

passed, failures = 0, []
for pr in problems:
    program = pr["prompt"] + pr["canonical_solution"] + "\n" + pr["test"] + f"\ncheck({pr['entry_point']})\n"
    rc, err = run(program)
    if rc == 0:
        passed += 1
    else:
        failures.append((pr["task_id"], rc, err.strip().splitlines()[-1:] ))
if len(problems) == 164 and passed == 164:
    print(f"PASS humaneval_all_canonical_solutions_pass ({passed}/164)")
else:
    print(f"FAIL humaneval_all_canonical_solutions_pass: {passed}/{len(problems)}; first failures: {failures[:3]}")

# Wrong solutions must come back as failures, each with the assertion in stderr.
wrong_ok = 0
for pr in problems[:10]:
    program = pr["prompt"] + "    raise NotImplementedError('wrong on purpose')\n" + "\n" + pr["test"] + \
              f"\ncheck({pr['entry_point']})\n"
    rc, err = run(program)
    if rc != 0 and "NotImplementedError" in err:
        wrong_ok += 1
print(("PASS" if wrong_ok == 10 else "FAIL") + f" humaneval_wrong_solutions_reported ({wrong_ok}/10)")
PY
