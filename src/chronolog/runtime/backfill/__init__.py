"""Backfill and replay (CONTRACT §5): re-evaluate a span of history, emit corrections.

* ``segments`` — the final meaning of an arrival-ordered history (delayed
  events at their time, retracted events removed), the split of a span into
  time segments with a warm-up that makes each segment exact, and the
  evaluation of one segment with the engine (``Reasoner``'s engine and
  warm-up rule: no second evaluator).
* ``points`` — answer lines (CONTRACT §3) as sets of (pred, args, time) points,
  and corrections as ``diff`` lines with consecutive points merged.
* ``job`` — the PySpark job: read history and published answers (JSONL, the
  Parquet archive or Kafka), evaluate the segments in Spark tasks, compare,
  emit the corrections.
* ``archive`` — the archiver writing Kafka topics to partitioned Parquet.
* ``kafka_source`` — a Spark Python data source reading a Kafka topic with
  confluent-kafka (the Spark Kafka connector jar is not needed).
"""
