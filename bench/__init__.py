"""`make bench`: throughput, quota (against a paced SDK loop too), CPU per record, latency, scale, memory and
local-cluster re-read benchmarks of the connector; the results page is docs/benchmarks.md (bench/page.py)."""
