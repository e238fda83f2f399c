"""run.py's report of KubeRay's go test output: the rows and, for a failing case, the progress
lines a CI log keeps (KubeRay's cases log through their parent Test's T)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

OUTPUT = """=== RUN   TestRayJob
    rayjob_test.go:34: [2026-12-06T11:00:00Z] Created ConfigMap ns/jobs successfully
=== RUN   TestRayJob/Successful_RayJob
=== NAME  TestRayJob
    rayjob_test.go:51: [2026-12-06T11:00:01Z] Created RayJob ns/counter successfully
    rayjob_test.go:59: Timed out after 60.001s.
        Expected success, but got an error:
            services "counter-head-svc" not found
--- FAIL: TestRayJob (61.00s)
    --- FAIL: TestRayJob/Successful_RayJob (60.00s)
=== RUN   TestRayJobRetry
    rayjob_retry_test.go:26: [2026-12-06T11:01:00Z] Created ConfigMap other/jobs successfully
--- PASS: TestRayJobRetry (7.00s)
FAIL
"""


LOGGED = """=== RUN   TestRayJob
=== RUN   TestRayJob/ray-job.sample.yaml
    rayjob_test.go:42: [2026-12-07T11:00:00Z] Waiting for RayCluster ns/c to be ready
    resource_logger.go:56: 
        Timed out after 120.000s.
        Expected
            <string>: Failed
--- FAIL: TestRayJob (120.00s)
    --- FAIL: TestRayJob/ray-job.sample.yaml (120.00s)
"""


class ReportTest(unittest.TestCase):
    def test_a_failure_the_resource_logger_reports_is_the_first_failure(self):
        rows = {r["case"]: r for r in run.parse(LOGGED)}
        failure = rows["TestRayJob/ray-job.sample.yaml"]["failure"]
        self.assertIn("resource_logger.go:56", failure)
        self.assertIn("Timed out after 120.000s", failure)

    def test_a_failing_case_is_a_row_with_its_first_failure(self):
        rows = {r["case"]: r for r in run.parse(OUTPUT)}
        self.assertEqual(rows["TestRayJob/Successful_RayJob"]["result"], "fail")
        self.assertIn("rayjob_test.go:59", rows["TestRayJob/Successful_RayJob"]["failure"])
        self.assertEqual(rows["TestRayJobRetry"]["result"], "pass")

    def test_a_failing_cases_progress_includes_its_parents_lines_and_no_other_tests(self):
        lines = run.case_lines(OUTPUT, {"TestRayJob/Successful_RayJob"})
        self.assertTrue(any("Created RayJob ns/counter" in ln for ln in lines))
        self.assertTrue(any("Created ConfigMap ns/jobs" in ln for ln in lines))
        self.assertFalse(any("other/jobs" in ln for ln in lines))


if __name__ == "__main__":
    unittest.main()
