"""scripts/cluster.sh as the tests call it (tests/e2e/node_test.py, node_down_test.py and
tests/kuberay-e2e/stage.py): a failure raises with the end of what the script printed."""
import os
import subprocess


def cluster(root, *args, check=True):
    """The finished `bash scripts/cluster.sh ARGS...` (stdout and stderr captured)."""
    done = subprocess.run(["bash", os.path.join(root, "scripts/cluster.sh"), *args],
                          capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(f"cluster.sh {' '.join(args)}: exit {done.returncode}\n"
                             f"{done.stdout[-1000:]}{done.stderr[-4000:]}")
    return done


def kubeconfig(up):
    """The KUBECONFIG path of `cluster.sh up`'s last line, `export KUBECONFIG=...`."""
    return up.stdout.strip().splitlines()[-1].split("=", 1)[1]
