"""`make soak`: a seeded, reproducible chaos run of the connector's source (Jepsen-style).

A producer outside the connector (boto3) writes keyed, numbered records to a simulator stream; a streaming query
(`spark.readStream.format("kinesis")` in a `spark-submit` driver on `local-cluster[2,1,1024]`) copies them into an
idempotent file sink; a chaos loop injects faults drawn from a seeded plan (reshards, throttling, 5xx, resets,
hangs, iterator expiry, subscription cuts, clock skew, query restarts, driver and executor kills). At the end an
independent boto3 reader reads the whole stream and the checks compare the three views: every acknowledged record
exactly once in the sink, nothing there that Kinesis does not hold, per-key order, no unplanned query failure, no
leak in the driver. Entry point: `python -m soak.run` (what `make soak` calls); docs/dev/soak.md.
"""
