"""The bench's pure helpers: the raw writer's even spread over a stream's shards, the CPU section's shapes."""

from __future__ import annotations

from collections import Counter

from bench.cpu import _shape_plan
from bench.env import Settings
from bench.loops import BATCH, spread_hash_key


def test_records_are_dealt_round_robin_into_each_range_of_an_evenly_split_stream() -> None:
    for shards in (1, 7, 64, 1000):
        width = 2**128 // shards
        for i in range(3 * shards):
            key = int(spread_hash_key(i, shards))
            assert 0 <= key < 2**128
            assert i % shards * width <= key < (i % shards + 1) * width, (shards, i)


def test_the_writers_two_requests_together_hold_every_shard_within_one_record() -> None:
    shards = 64
    counts = Counter(int(spread_hash_key(i, shards)) * shards >> 128 for i in range(2 * BATCH))
    assert len(counts) == shards and max(counts.values()) - min(counts.values()) <= 1


def test_the_busy_cpu_shape_takes_more_shards_where_a_record_size_asks_for_them() -> None:
    settings = Settings.for_mode("full")
    (quota_bound, _, judged_first), (busy, _, judged) = _shape_plan(settings)
    assert quota_bound == {100: 8, 1024: 8} and not judged_first and judged
    assert busy == {100: 64, 1024: 128}


def test_sink_cluster_rate_leaves_out_the_first_second_and_counts_every_throttled_attempt() -> None:
    from bench.sink_cluster import figures

    # (time, stored records, stored bytes, throttled): 4 shards at 1000 records/s after a first second of 2000.
    samples = [(0.0, 0, 0, 0), (0.5, 1000, 0, 0), (1.5, 3000, 0, 5)] + [
        (1.5 + t, 3000 + 4000 * t, 0, 5 + t) for t in range(1, 8)
    ]
    f = figures(samples, shards=4, hot=False)
    assert f["ofQuota"] == 1.0  # 1.5 s -> 90 % of 31,000 stored, at 4,000 a second
    assert f["throttled"] == 12 and f["attempts"] == 31_012 and f["stored"] == 31_000
