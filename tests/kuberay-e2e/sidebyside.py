"""One table from two run.py --json files (rayjournal's and KubeRay's run of the same suite):
one row per case, each operator's result and seconds, and the first failure of whichever failed.

  sidebyside.py rayjournal.json kuberay.json [--markdown FILE]"""

import argparse
import json
import sys


def load(path):
    with open(path) as f:
        run = json.load(f)
    return run["summary"], {r["case"]: r for r in run["cases"]}


def summary_line(meta):
    return (f"{meta['operator']}: {meta['passed']} passed, {meta['failed']} failed, "
            f"{meta['not_run']} not run · commit {meta['commit']} · {meta['date']} · "
            f"{meta['seconds']:.0f} s")


def table(a_meta, a, b_meta, b):
    cases = list(a) + [c for c in b if c not in a]
    out = [summary_line(a_meta), "", summary_line(b_meta), "",
           f"| case | {a_meta['operator']} | {b_meta['operator']} | first failure |",
           "|---|---|---|---|"]
    for case in sorted(cases):
        ra, rb = a.get(case), b.get(case)
        cell = (lambda r: f"{r['result']} ({r['seconds']:.0f} s)" if r else "—")
        failure = "; ".join(f"{m['operator']}: {r['failure']}" for m, r in ((a_meta, ra), (b_meta, rb))
                            if r and r["result"] == "fail" and r["failure"])
        out.append(f"| {case.replace('_', ' ')} | {cell(ra)} | {cell(rb)} | "
                   f"{failure.replace('|', '/')[:400]} |")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--markdown", help="write the table here as well")
    args = p.parse_args()
    text = table(*load(args.first), *load(args.second))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
