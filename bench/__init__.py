"""`make bench`: throughput, quota, latency, scale and memory benchmarks of the connector (docs/benchmarks.md)."""
